// Package taskfile reads task files: YAML files that describe a run, its
// process tasks and the needs between them.
//
// A task file is checked as a whole before anything runs. [Parse] and
// [Load] report every problem they find, each on its line and with how to
// fix it, and return a [File] only when there is none. [File.NewRun] turns
// the File into the run to submit to a store.
//
// # An example
//
//	name: settlement            # the run's name
//	max_failures: 3             # the run fails when more than 3 tasks fail
//	defaults:                   # for every task that does not set the key
//	  retry: "3 1s 30s"
//	  timeout: 30s
//	tasks:
//	  fetch:
//	    run: ./fetch.sh --day today        # a string: run with sh -c
//	  settle:
//	    run: [./settle, --merchant, "42"]  # a list: the program and its arguments, no shell
//	    needs: [fetch]
//	    retry: {attempts: 5, min: 1s, max: 30s, jitter: full}
//	    timeout: 10s
//	    group: payments-api
//	    retry_on_exit: [3, 4]
//	    permanent_on_exit: [2]
//	    env: {REGION: eu}
//	  report:
//	    run: ./report.sh
//	    needs: settle
//
// # The top level
//
//   - name (required): the run's name, on one line, up to 128 bytes.
//   - max_failures: how many tasks may fail; when more have failed, the run
//     fails and its tasks that have not started are cancelled. 0 (the
//     default) is no limit.
//   - defaults: any task key but run and needs, applied to every task that
//     does not set it. A task's key replaces the default's whole (a task's
//     retry mapping is not merged with the default's, nor its exit-code
//     lists), except env, whose variables are merged, the task's winning.
//   - tasks (required, at least one): a mapping from task names to tasks,
//     kept in the file's order. A name has letters, digits, _, . and -,
//     starts with a letter or a digit, and is at most 128 characters.
//   - schedules: a mapping from schedule names to schedules, each running
//     a task of the file (one without needs) on a cron expression or at an
//     interval, kept in [File.Schedules]. A run does not hold them.
//   - limits: a mapping from "SCOPE NAME" (queue, kind, group or tenant,
//     and its name: tenant acme) to max (the most attempts running at
//     once, 1 or more; not for a kind), rate (the most calls a second,
//     minute or hour: 5/s, 300/m, 100/h) and burst (calls at once under
//     the rate, 1 or more; a second's worth, at least 1, when not set), as
//     grit limits set takes them: "tenant acme: {rate: 5/s, burst: 10}".
//     grit submit and grit run set them in the store, for the whole fleet,
//     before they submit the run; a limit the file does not name is left
//     as it is. Kept in [File.Limits].
//
// # A task's keys
//
//   - run (required): the command. A string runs with sh -c; a list is the
//     program and its arguments, run without a shell. Every item of a list
//     is a string: quote numbers ("42") and items holding ": ".
//   - needs: a task name or a list of them: the tasks of this file that must
//     succeed first. A task cannot need itself, nor, through others, a task
//     that needs it.
//   - retry: the retry policy, a string or a mapping (below). Without it,
//     the engine's default policy applies.
//   - timeout: a duration (300ms, 30s, 1h30m) after which the attempt is cut
//     off; 0 (the default) is none; auto is one learned from the task's
//     successful runs (task.AutoTimeout).
//   - grace: how long the process has between SIGTERM and SIGKILL when it is
//     cut off; above zero, 5s when not set.
//   - group: the downstream the task calls (payments-api): circuit breakers
//     and retry budgets are kept per group. Same rule as task names.
//   - queue: the queue the task waits in; "default" when not set. Same rule
//     as task names.
//   - tenant: whose work the task is (acme): limits of running attempts may
//     be set per tenant (grit limits). Same rule as task names.
//   - priority: a whole number; higher runs first; 0 when not set.
//   - poison_after: how many identical unclassified failures in a row make
//     the task poison (DEAD_LETTER); 1 or more, the policy's (2) when not
//     set.
//   - quarantine: a mapping of kind (what a replayed item runs as), max and
//     max_share (how many items the process may set aside, writing them to
//     $GRIT_QUARANTINE_FILE, and the task still succeed).
//   - retry_on_exit, permanent_on_exit, resource_on_exit, snooze_on_exit:
//     exit codes (1 to 255; a list, or a single code) that mean a transient
//     failure (retried with backoff, never poison), a permanent one (FAILED
//     at once), resource pressure (deferred with the resource backoff) or
//     "not yet" (the task snoozes: it runs again later, using no attempt).
//     Any other non-zero exit is retried and checked for poison. Exit 75
//     (EX_TEMPFAIL) is always transient: it need not be listed, and cannot
//     be listed in another list. A code can be in one list only.
//   - snooze: how long a snooze waits (task.DefaultSnooze, 1m, when not
//     set), unless the process wrote a delay (30s, or 30 for seconds) to
//     the file named by GRIT_SNOOZE_FILE in its environment.
//   - max_snoozes: how many times the task may snooze; asked for once more,
//     the snooze fails the task. 0 (the default) is no bound. snooze and
//     max_snoozes are refused in a task without snooze_on_exit.
//   - env: a mapping of environment variables added to the worker's. Names
//     have letters, digits and _ and do not start with a digit; a value is
//     any scalar, kept as written (8080, true), and an empty value is "".
//   - dir: the working directory, relative to the worker's; the worker's
//     own when not set.
//
// # Retry policies
//
// A string is a policy in [retry.Parse]'s grammar, "[count] min [max]
// [option=value …]", where count is the number of retries:
//
//	retry: "5s"            # every 5s, without limit
//	retry: "10 5s"         # 10 retries, every 5s
//	retry: "10 5s 10m"     # 10 retries, exponential from 5s up to 10m, full jitter
//	retry: "3 1s 1m jitter=equal max_elapsed=30m"
//	retry: "3 1s explicit_only"           # only failures marked retryable are retried
//	retry: "5 1s 1m transient=20,2s,5m"   # transient failures get their own schedule
//	retry: never
//
// A mapping spells the same out; attempts counts every attempt, the first
// included:
//
//	retry:
//	  attempts: 5          # 0 (the default) is no limit; 1 never retries
//	  min: 1s              # the first delay; 1s when max is set without it
//	  max: 30s             # with max the backoff is exponential; without, a constant min
//	  multiplier: 2        # growth per retry, 1 to 1000; 2 when not set
//	  jitter: full         # full (the default), equal, none, or decorrelated
//	  max_elapsed: 5m      # a time budget for all the attempts
//	  explicit_only: true  # retry only failures marked retryable; false when not set
//	  transient: 20,2s,5m  # a class's own schedule, as in a string (also unclassified, after, resource)
//
// multiplier and jitter need max. A mapping with neither min nor max keeps
// the engine's default backoff (exponential from 1s to 5m, full jitter).
//
// # YAML
//
// A task file is one YAML document. Anchors, aliases and merge keys
// (<<: *base) are followed. Top-level keys that start with x- are ignored:
// they are a place to define anchors. A key written twice in a mapping is an error,
// reported on both lines, whatever YAML itself would do with it.
//
// # Errors
//
// Every error reads "taskfile PATH:LINE: what is wrong (how to fix it)":
//
//	taskfile settle.yaml:12: retry "10 5x": "5x" is not a duration (e.g. 300ms, 5s, 2m)
//	taskfile settle.yaml:7: unknown key "timout" (did you mean "timeout"?)
//	taskfile settle.yaml:14: task "settle" needs "fetc", which is not a task of this file (did you mean "fetch"? tasks: fetch, report)
//	taskfile settle.yaml:20: cycle: a -> b -> c -> a (each task needs the next, so none can start: remove one of these needs)
//
// Parse and Load return them all, sorted by line, joined with errors.Join;
// each is an [*Error].
package taskfile
