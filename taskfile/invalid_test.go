package taskfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/grit-run/grit/taskfile"
)

// head starts most invalid files; the problem is on line 3 or later.
const head = "name: x\ntasks:\n"

// schedHead starts the files of invalid schedules; the first schedule is
// on line 6.
const schedHead = "name: x\ntasks:\n  report: {run: ./report}\n  mail: {run: ./mail, needs: report}\nschedules:\n"

var invalidTests = []struct {
	name string
	yaml string
	line int
	msg  string // a fragment of the error on that line
}{
	// The file as a whole.
	{"empty file", "", 1, "the file is empty"},
	{"only a comment", "# nothing\n", 1, "the file is empty"},
	{"null document", "---\n", 1, "the file is empty"},
	{"not a mapping", "- a\n- b\n", 1, "the file is a list (a task file is a mapping"},
	{"a scalar", "hello\n", 1, `the file is "hello"`},
	{"two documents", "name: x\ntasks: {a: {run: x}}\n---\nname: y\n", 3, "more than one YAML document"},
	{"bad YAML", "name: x\ntasks:\n  a:\n    run: [x, y\n", 4, "bad YAML: did not find expected ',' or ']' (fix the YAML syntax)"},
	{"bad YAML, mapping in scalar", "name: x\n  bad: 1\n", 2, "bad YAML: mapping values are not allowed"},
	{"tab indent", "name: x\ntasks:\n\ta: {run: x}\n", 3, "YAML indents with spaces, never tabs"},
	{"unknown anchor", "name: x\ntasks:\n  a: {run: *cmd}\n", 3, "unknown anchor 'cmd'"},
	{"missing name", "tasks:\n  a: {run: x}\n", 1, "the run has no name (add name:"},
	{"blank name", "name: ' '\ntasks:\n  a: {run: x}\n", 1, `name " " is blank`},
	{"name on two lines", "name: \"a\\nb\"\ntasks:\n  a: {run: x}\n", 1, "holds a control character"},
	{"name a list", "name: [a]\ntasks:\n  a: {run: x}\n", 1, "name is a list (it takes the run's name"},
	{"missing tasks", "name: x\n", 1, "the file has no tasks"},
	{"empty tasks", "name: x\ntasks: {}\n", 2, "the file has no tasks"},
	{"tasks a list", "name: x\ntasks:\n  - a\n", 3, "tasks is a list (it takes a mapping of task names"},
	{"max_failures negative", "name: x\nmax_failures: -1\ntasks: {a: {run: x}}\n", 2, "max_failures -1 is out of range"},
	{"max_failures not a number", "name: x\nmax_failures: many\ntasks: {a: {run: x}}\n", 2, `max_failures "many" is not a whole number`},

	// Unknown keys.
	{"unknown top-level key", "name: x\ntask:\n  a: {run: x}\n", 2, `unknown key "task" (did you mean "tasks"?)`},
	{"unknown top-level key, far", "name: x\nowner: me\ntasks: {a: {run: x}}\n", 2, `unknown key "owner" (the top-level keys are name, max_failures, defaults, tasks, schedules, limits)`},
	{"task key at the top", "name: x\ntimeout: 1s\ntasks: {a: {run: x}}\n", 2, `unknown key "timeout" at the top level (it is a task's key: put it under defaults:`},
	{"unknown key in defaults", "name: x\ndefaults:\n  timout: 1s\ntasks: {a: {run: x}}\n", 3, `unknown key "timout" (did you mean "timeout"?)`},
	{"run in defaults", "name: x\ndefaults:\n  run: x\ntasks: {a: {run: x}}\n", 3, "run cannot have a default (set it in each task)"},
	{"unknown key in a task", head + "  a:\n    run: x\n    timout: 1s\n", 5, `unknown key "timout" (did you mean "timeout"?)`},
	{"unknown key in a task, far", head + "  a:\n    run: x\n    command: y\n", 5, `unknown key "command" (a task's keys are run, needs, retry`},
	{"case of a key", head + "  a:\n    Run: x\n", 4, `unknown key "Run" (did you mean "run"?)`},
	{"unknown key in retry", head + "  a:\n    run: x\n    retry: {attempts: 3, mni: 1s}\n", 5, `unknown key "mni" (did you mean "min"?)`},
	{"retry synonym", head + "  a:\n    run: x\n    retry:\n      retries: 3\n", 6, `unknown key "retries" (did you mean "attempts"?)`},

	// Keys and tasks written twice.
	{"task twice", head + "  a: {run: x}\n  b: {run: y}\n  a: {run: z}\n", 5, `task "a" is defined twice, at lines 3 and 5 (rename or remove one)`},
	{"key twice", head + "  a:\n    run: x\n    timeout: 1s\n    timeout: 2s\n", 6, `key "timeout" is defined twice, at lines 5 and 6 (keep one)`},
	{"top-level key twice", "name: x\nname: y\ntasks: {a: {run: x}}\n", 2, `key "name" is defined twice, at lines 1 and 2`},
	{"env variable twice", head + "  a: {run: x, env: {A: 1, A: 2}}\n", 3, `variable "A" is defined twice`},

	// Task names and run.
	{"bad task name", head + "  my task: {run: x}\n", 3, `task name "my task" is not valid (use letters, digits`},
	{"task name starts with a dot", head + "  .hidden: {run: x}\n", 3, `task name ".hidden" is not valid`},
	{"task not a mapping", head + "  a: ./run.sh\n", 3, `task "a" is "./run.sh" (a task is a mapping with at least run:`},
	{"empty task", head + "  a:\n", 3, `task "a" is empty`},
	{"no run", head + "  a:\n    timeout: 1s\n", 3, `task "a" has no run (add run:`},
	{"empty run", head + "  a:\n    run:\n", 4, "run is empty (it takes a command string"},
	{"blank run", head + "  a: {run: \"  \"}\n", 3, "run is blank"},
	{"empty run list", head + "  a: {run: []}\n", 3, "run is an empty list"},
	{"run a number", head + "  a: {run: 42}\n", 3, `run is 42, which is not a string (quote it: run: "42")`},
	{"run a mapping", head + "  a:\n    run: {cmd: x}\n", 4, "run is a mapping (it takes a command string"},
	{"run item a number", head + "  a:\n    run:\n      - ./settle\n      - 42\n", 6, `run item 42 is not a string (quote it: "42")`},
	{"run item a mapping", head + "  a:\n    run:\n      - ./settle\n      - --level: 3\n", 6, "run item is a mapping"},
	{"run item empty", head + "  a: {run: [./x, ~]}\n", 3, "run item is empty"},
	{"run program empty", head + "  a: {run: [\"\", x]}\n", 3, "run's program, its first item, is empty"},
	{"run with a NUL", head + "  a: {run: \"a\\0b\"}\n", 3, "run holds a NUL byte"},

	// Durations.
	{"not a duration", head + "  a: {run: x, timeout: soon}\n", 3, `timeout "soon" is not a duration (e.g. 300ms`},
	{"duration without a unit", head + "  a: {run: x, timeout: 30}\n", 3, `timeout "30" is not a duration (a number needs a unit`},
	{"negative timeout", head + "  a: {run: x, timeout: -5s}\n", 3, `timeout "-5s" is negative`},
	{"timeout nearly auto", head + "  a: {run: x, timeout: automatic}\n", 3, `timeout "automatic" is not a duration (e.g. 300ms, 30s, 2m, 1h30m, or auto)`},
	{"auto grace", head + "  a: {run: x, grace: auto}\n", 3, `grace "auto" is not a duration (e.g. 300ms, 30s, 2m, 1h30m)`},
	{"zero grace", head + "  a: {run: x, grace: 0s}\n", 3, `grace "0s" must be longer than zero`},
	{"duration a list", head + "  a: {run: x, grace: [1s]}\n", 3, "grace is a list (it takes a duration"},

	// Retry.
	{"bad policy string", head + "  a:\n    run: x\n    retry: \"10 5x\"\n", 5, `retry "10 5x": "5x" is not a duration (e.g. 300ms, 5s, 2m)`},
	{"policy string, too many fields", head + "  a: {run: x, retry: 3 1s 2s 3s}\n", 3, `retry "3 1s 2s 3s": "3s" is one field too many (e.g. "10 5s 10m"`},
	{"bad default policy", "name: x\ndefaults:\n  retry: 5x\ntasks: {a: {run: x}}\n", 3, `retry "5x": "5x" is not a duration`},
	{"empty retry", head + "  a: {run: x, retry: }\n", 3, "retry is empty (it takes a policy string"},
	{"empty retry map", head + "  a: {run: x, retry: {}}\n", 3, "retry is an empty mapping"},
	{"retry a list", head + "  a: {run: x, retry: [3, 1s]}\n", 3, "retry is a list"},
	{"negative attempts", head + "  a:\n    run: x\n    retry:\n      attempts: -1\n", 6, "attempts -1 is out of range"},
	{"zero min", head + "  a:\n    run: x\n    retry:\n      min: 0s\n", 6, `min "0s" must be longer than zero`},
	{"max below min", head + "  a:\n    run: x\n    retry:\n      min: 10s\n      max: 1s\n", 7, "max 1s is below min 10s"},
	{"max below the default min", head + "  a: {run: x, retry: {max: 500ms}}\n", 3, "max 500ms is below min 1s"},
	{"jitter without max", head + "  a:\n    run: x\n    retry:\n      min: 1s\n      jitter: equal\n", 7, "jitter needs max"},
	{"multiplier without max", head + "  a:\n    run: x\n    retry:\n      multiplier: 3\n", 6, "multiplier needs max"},
	{"bad jitter", head + "  a: {run: x, retry: {min: 1s, max: 2s, jitter: ful}}\n", 3, `jitter "ful" is not a jitter`},
	{"bad multiplier", head + "  a: {run: x, retry: {min: 1s, max: 2s, multiplier: 0.5}}\n", 3, "multiplier 0.5 is out of range"},
	{"multiplier with decorrelated", head + "  a:\n    run: x\n    retry: {max: 2s, jitter: decorrelated,\n      multiplier: 3}\n", 6, "multiplier does not apply to jitter decorrelated"},
	{"zero max_elapsed", head + "  a: {run: x, retry: {max_elapsed: 0s}}\n", 3, `max_elapsed "0s" must be longer than zero`},
	{"explicit_only not a bool", head + "  a: {run: x, retry: {min: 1s, explicit_only: yes}}\n", 3, `explicit_only "yes" is not true or false`},
	{"bad class schedule", head + "  a:\n    run: x\n    retry:\n      transient: 20,5x\n", 6, `transient "20,5x": "5x" is not a duration (e.g. 300ms, 5s, 2m) (it takes never or [count,]min[,max][,jitter], e.g. 20,2s,5m)`},
	{"unclassified with explicit_only", head + "  a:\n    run: x\n    retry:\n      explicit_only: true\n      unclassified: 1,1s\n", 7, "unclassified has no effect with explicit_only"},
	{"bad class in a string", head + "  a: {run: x, retry: \"3 1s transient=20\"}\n", 3, `retry "3 1s transient=20": "transient=20" has no delay after its count`},

	// Needs.
	{"unknown need", head + "  fetch: {run: x}\n  settle:\n    run: y\n    needs: [fetc]\n  report: {run: z}\n", 6,
		`task "settle" needs "fetc", which is not a task of this file (did you mean "fetch"? tasks: fetch, report)`},
	{"unknown need, far", head + "  a: {run: x, needs: zzz}\n  b: {run: y}\n", 3, `task "a" needs "zzz", which is not a task of this file (tasks: b)`},
	{"need, only task", head + "  a: {run: x, needs: b}\n", 3, "(it is the only task)"},
	{"self need", head + "  a: {run: x}\n  b:\n    run: y\n    needs: [a, b]\n", 6, `task "b" needs itself (remove "b" from its needs)`},
	{"cycle of two", head + "  a: {run: x, needs: b}\n  b: {run: y, needs: a}\n", 3, "cycle: a -> b -> a"},
	{"cycle of three", head + "  a: {run: x, needs: c}\n  b: {run: x, needs: a}\n  c:\n    run: x\n    needs: [b]\n", 3, "cycle: a -> c -> b -> a"},
	{"needs a mapping", head + "  a: {run: x, needs: {b: 1}}\n", 3, "needs is a mapping (it takes a task name or a list"},
	{"needs an empty item", head + "  a: {run: x}\n  b: {run: x, needs: [a, ~]}\n", 4, "needs is empty"},

	// Quarantine.
	{"quarantine not a mapping", head + "  a: {run: x, quarantine: row-fix}\n", 3, `quarantine is "row-fix" (it takes a mapping, e.g. {kind: import-row, max: 10})`},
	{"quarantine kind exec", head + "  a: {run: x, quarantine: {kind: exec}}\n", 3, `quarantine kind "exec" is the kind of process tasks`},
	{"quarantine max negative", head + "  a: {run: x, quarantine: {max: -1}}\n", 3, "max"},
	{"quarantine share over one", head + "  a:\n    run: x\n    quarantine:\n      max_share: 1.5\n", 6, "max_share 1.5 is out of range (it takes a share from 0 to 1, e.g. 0.01)"},
	{"quarantine unknown key", head + "  a: {run: x, quarantine: {knid: row}}\n", 3, `"knid"`},

	// Exit codes.
	{"exit code out of range", head + "  a: {run: x, retry_on_exit: [3, 256]}\n", 3, "retry_on_exit lists exit code 256, which is out of range (exit codes go from 1 to 255)"},
	{"exit code negative", head + "  a: {run: x, permanent_on_exit: -1}\n", 3, "permanent_on_exit lists exit code -1, which is out of range"},
	{"exit code zero", head + "  a:\n    run: x\n    resource_on_exit:\n      - 0\n", 6, "resource_on_exit lists exit code 0, which is success"},
	{"exit code not a number", head + "  a: {run: x, retry_on_exit: [three]}\n", 3, `retry_on_exit "three" is not a whole number`},
	{"exit code huge", head + "  a: {run: x, retry_on_exit: [99999999999999999999]}\n", 3, "retry_on_exit"},
	{"exit code in two lists", head + "  a:\n    run: x\n    retry_on_exit: [3, 4]\n    permanent_on_exit: [4]\n", 6, "exit code 4 is listed in both retry_on_exit and permanent_on_exit"},
	{"exit code in a default and a task list", "name: x\ndefaults:\n  retry_on_exit: [3]\ntasks:\n  a:\n    run: x\n    resource_on_exit: [3]\n", 7, "exit code 3 is listed in both retry_on_exit and resource_on_exit"},
	{"exit code in two default lists", "name: x\ndefaults:\n  retry_on_exit: [3]\n  permanent_on_exit: [3]\ntasks: {a: {run: x}}\n", 4, "exit code 3 is listed in both"},
	{"75 as permanent", head + "  a: {run: x, permanent_on_exit: [75]}\n", 3, "exit code 75 (EX_TEMPFAIL), which is always transient"},
	{"75 as a snooze", head + "  a: {run: x, snooze_on_exit: 75}\n", 3, "snooze_on_exit lists exit code 75 (EX_TEMPFAIL), which is always transient (remove it)"},
	{"snooze code zero", head + "  a: {run: x, snooze_on_exit: [0]}\n", 3, "snooze_on_exit lists exit code 0, which is success"},
	{"snooze code out of range", head + "  a: {run: x, snooze_on_exit: [300]}\n", 3, "snooze_on_exit lists exit code 300, which is out of range (exit codes go from 1 to 255)"},
	{"snooze code also permanent", head + "  a:\n    run: x\n    permanent_on_exit: [2, 3]\n    snooze_on_exit: [3]\n", 6, "exit code 3 is listed in both permanent_on_exit and snooze_on_exit (a code has one meaning: keep it in one list)"},
	{"snooze code also a default's retry code", "name: x\ndefaults:\n  retry_on_exit: [3]\ntasks:\n  a:\n    run: x\n    snooze_on_exit: [3]\n", 7, "exit code 3 is listed in both retry_on_exit and snooze_on_exit"},
	{"snooze codes twice in defaults", "name: x\ndefaults:\n  snooze_on_exit: [9]\n  resource_on_exit: [9]\ntasks: {a: {run: x}}\n", 3, "exit code 9 is listed in both resource_on_exit and snooze_on_exit"},
	{"zero snooze", head + "  a: {run: x, snooze_on_exit: [3], snooze: 0s}\n", 3, `snooze "0s" must be longer than zero (a snooze waits before the task runs again; leave snooze out for the default 1m)`},
	{"snooze without a unit", head + "  a: {run: x, snooze_on_exit: [3], snooze: 30}\n", 3, `snooze "30" is not a duration (a number needs a unit: 30s, not 30)`},
	{"negative max_snoozes", head + "  a: {run: x, snooze_on_exit: [3], max_snoozes: -1}\n", 3, "max_snoozes -1 is out of range (it takes a whole number from 0"},
	{"max_snoozes not whole", head + "  a: {run: x, snooze_on_exit: [3], max_snoozes: many}\n", 3, `max_snoozes "many" is not a whole number`},
	{"snooze without snooze codes", head + "  a:\n    run: x\n    snooze: 5m\n", 5, `snooze is set, but the task has no snooze_on_exit, so it never snoozes (list the exit codes that mean "not yet" in snooze_on_exit, or remove snooze)`},
	{"max_snoozes without snooze codes", head + "  a:\n    run: x\n    snooze_on_exit: []\n    max_snoozes: 3\n", 6, "max_snoozes is set, but the task has no snooze_on_exit"},
	{"snooze key typo", head + "  a: {run: x, snoze_on_exit: [3]}\n", 3, `unknown key "snoze_on_exit" (did you mean "snooze_on_exit"?)`},

	// Env, dir and the other keys.
	{"bad env name", head + "  a:\n    run: x\n    env:\n      MY-VAR: 1\n", 6, `env variable "MY-VAR" is not a valid name`},
	{"env name starts with a digit", head + "  a: {run: x, env: {1A: x}}\n", 3, `env variable "1A" is not a valid name`},
	{"env value a list", head + "  a:\n    run: x\n    env:\n      A: [1, 2]\n", 6, "env variable A is a list (it takes a string)"},
	{"env a list", head + "  a: {run: x, env: [A=1]}\n", 3, "env is a list (it takes a mapping"},
	{"empty dir", head + "  a: {run: x, dir: \"\"}\n", 3, "dir is empty"},
	{"bad group", head + "  a: {run: x, group: payments api}\n", 3, `group "payments api" is not a valid name`},
	{"bad queue", head + "  a: {run: x, queue: [q]}\n", 3, "queue is a list"},
	{"bad tenant", head + "  a: {run: x, tenant: acme corp}\n", 3, `tenant "acme corp" is not a valid name`},
	{"priority not whole", head + "  a: {run: x, priority: 1.5}\n", 3, `priority "1.5" is not a whole number`},
	{"poison_after zero", head + "  a: {run: x, poison_after: 0}\n", 3, "poison_after 0 is out of range"},
	{"defaults not a mapping", "name: x\ndefaults: [a]\ntasks: {a: {run: x}}\n", 2, "defaults is a list"},

	// Schedules.
	{"schedules a list", "name: x\ntasks: {a: {run: x}}\nschedules: [a]\n", 3, "schedules is a list (it takes a mapping of schedule names"},
	{"schedules empty", "name: x\ntasks: {a: {run: x}}\nschedules:\n", 3, "schedules is empty"},
	{"schedule not a mapping", schedHead + "  nightly: report\n", 6, `schedule "nightly" is "report" (a schedule is a mapping with task:`},
	{"schedule name not valid", schedHead + "  nightly report: {task: report, every: 1m}\n", 6, `schedule name "nightly report" is not valid (use 1 to 200 letters, digits and - _ . /)`},
	{"schedule twice", schedHead + "  a: {task: report, every: 1m}\n  a: {task: report, every: 2m}\n", 7, `schedule "a" is defined twice, at lines 6 and 7 (rename or remove one)`},
	{"schedule key unknown", schedHead + "  a:\n    task: report\n    crn: \"@daily\"\n", 8, `unknown key "crn" (did you mean "cron"?)`},
	{"schedule key unknown, far", schedHead + "  a: {task: report, every: 1m, owner: me}\n", 6, `unknown key "owner" (a schedule's keys are task, cron, every, zone, jitter, overlap, catch_up, pause_after)`},
	{"schedule key synonym", schedHead + "  a: {task: report, every: 1m, timezone: UTC}\n", 6, `unknown key "timezone" (did you mean "zone"?)`},
	{"task key in a schedule", schedHead + "  a:\n    task: report\n    every: 1m\n    retry: never\n", 9, `unknown key "retry" in a schedule (it is a task's key: set it on the task the schedule runs)`},
	{"schedule without task", schedHead + "  a: {every: 1m}\n", 6, `schedule "a" has no task (add task: with the name of a task of this file)`},
	{"schedule of an unknown task", schedHead + "  a:\n    task: reprot\n    every: 1m\n", 7, `schedule "a" runs task "reprot", which is not a task of this file (did you mean "report"? tasks: report, mail)`},
	{"schedule task a list", schedHead + "  a: {task: [report], every: 1m}\n", 6, "task is a list (it takes the name of a task of this file)"},
	{"schedule of a task with needs", schedHead + "  a:\n    every: 1m\n    task: mail\n", 8, `a schedule runs one task alone; task "mail" needs "report" (schedule a task without needs`},
	{"schedule with cron and every", schedHead + "  a:\n    task: report\n    cron: \"@daily\"\n    every: 1h\n", 9, `schedule "a" has both cron and every (keep one: cron for times of day, every for an interval)`},
	{"schedule without cron or every", schedHead + "  a: {task: report}\n", 6, `schedule "a" has no cron and no every (add cron: with a cron expression`},
	{"cron of four fields", schedHead + "  a:\n    task: report\n    cron: \"0 2 * *\"\n", 8, `schedule "a": cron "0 2 * *" has 4 fields (want five fields, minute hour day-of-month month day-of-week, e.g. "0 2 * * *"`},
	{"cron out of range", schedHead + "  a:\n    task: report\n    cron: \"0 25 * * *\"\n", 8, `schedule "a": cron "0 25 * * *": end of range (25) above maximum (23): 25 (want five fields`},
	{"cron that never comes", schedHead + "  a: {task: report, cron: \"0 2 31 2 *\"}\n", 6, `cron "0 2 31 2 *" never comes`},
	{"cron with a zone", schedHead + "  a:\n    task: report\n    cron: \"CRON_TZ=Europe/Paris 0 2 * * *\"\n", 8, `cron "CRON_TZ=Europe/Paris 0 2 * * *" (set the time zone with zone, not in the expression)`},
	{"cron of an interval", schedHead + "  a: {task: report, cron: \"@every 5m\"}\n", 6, `cron "@every 5m" (write an interval as every (e.g. every: 5m), not in cron)`},
	{"cron blank", schedHead + "  a: {task: report, cron: \" \"}\n", 6, "cron is blank (it takes a cron expression"},
	{"cron a list", schedHead + "  a: {task: report, cron: [0, 2]}\n", 6, "cron is a list (it takes a cron expression"},
	{"every not a duration", schedHead + "  a:\n    task: report\n    every: 30\n", 8, `every "30" is not a duration (a number needs a unit: 30s, not 30)`},
	{"every zero", schedHead + "  a: {task: report, every: 0s}\n", 6, `every "0s" must be longer than zero (an interval such as 30s or 1h`},
	{"every not whole seconds", schedHead + "  a:\n    task: report\n    every: 1500ms\n", 8, `schedule "a": every 1.5s (want a whole number of seconds, 1s or more)`},
	{"bad zone", schedHead + "  a:\n    task: report\n    cron: \"@daily\"\n    zone: Europe/Pariss\n", 9, `schedule "a": zone "Europe/Pariss" (want an IANA time zone, e.g. UTC, Europe/Paris`},
	{"zone Local", schedHead + "  a: {task: report, cron: \"@daily\", zone: Local}\n", 6, `zone "Local" (want an IANA time zone`},
	{"zone with every", schedHead + "  a:\n    task: report\n    every: 1m\n    zone: Europe/Paris\n", 9, `schedule "a": zone "Europe/Paris" with every 1m0s (an interval's slots are the same instants in every zone; set a zone with cron)`},
	{"jitter not a duration", schedHead + "  a: {task: report, every: 1m, jitter: some}\n", 6, `jitter "some" is not a duration`},
	{"jitter too long", schedHead + "  a:\n    task: report\n    every: 1m\n    jitter: 25h\n", 9, `jitter "25h" is too long (a slot's task waits at most 24h`},
	{"jitter negative", schedHead + "  a: {task: report, every: 1m, jitter: -1s}\n", 6, `jitter "-1s" is negative`},
	{"bad overlap", schedHead + "  a:\n    task: report\n    every: 1m\n    overlap: buffer\n", 9, `overlap "buffer" is not an overlap policy (it takes skip, buffer_one, allow)`},
	{"overlap typo", schedHead + "  a: {task: report, every: 1m, overlap: alow}\n", 6, `overlap "alow" is not an overlap policy (did you mean "allow"?`},
	{"catch_up zero", schedHead + "  a: {task: report, every: 1m, catch_up: 0s}\n", 6, `catch_up "0s" must be longer than zero (how late a missed slot may still run; leave catch_up out for 1h)`},
	{"catch_up not a duration", schedHead + "  a:\n    task: report\n    every: 1m\n    catch_up: 1d\n", 9, `catch_up "1d" is not a duration`},
	{"pause_after too many", schedHead + "  a:\n    task: report\n    every: 1m\n    pause_after: 101\n", 9, "pause_after 101 is out of range (it takes a whole number from 0 to 100"},
	{"pause_after negative", schedHead + "  a: {task: report, every: 1m, pause_after: -1}\n", 6, "pause_after -1 is out of range"},
	{"schedule key twice", schedHead + "  a:\n    task: report\n    every: 1m\n    every: 2m\n", 9, `key "every" is defined twice, at lines 8 and 9 (keep one)`},
	{"schedules without tasks", "name: x\nschedules:\n  a: {task: report, every: 1m}\n", 1, "the file has no tasks"},
	{"schedules, a typo at the top", "name: x\ntasks: {a: {run: x}}\nschedule:\n  a: {task: a, every: 1m}\n", 3, `unknown key "schedule" (did you mean "schedules"?)`},

	// Merge keys.
	{"merge of a scalar", head + "  a:\n    <<: x\n    run: x\n", 4, `<< merges "x" (merge a mapping`},
	{"mapping merges itself", head + "  a: &a\n    run: x\n    <<: *a\n", 5, "this mapping merges itself"},
}

// errorsOf returns the problems a Parse error joins.
func errorsOf(t *testing.T, err error) []*taskfile.Error {
	t.Helper()
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]*taskfile.Error, 0, len(errs))
	for _, e := range errs {
		var te *taskfile.Error
		if !errors.As(e, &te) {
			t.Fatalf("error %v (%T) is not a *taskfile.Error", e, e)
		}
		out = append(out, te)
	}
	return out
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	for _, tt := range invalidTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := taskfile.Parse("test.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", f)
			}
			if f != nil {
				t.Errorf("Parse returned a File with its error")
			}
			for _, e := range errorsOf(t, err) {
				if e.Line == tt.line && strings.Contains(e.Msg, tt.msg) {
					if !strings.HasPrefix(e.Error(), "taskfile test.yaml:") || !strings.HasSuffix(e.Msg, ")") {
						t.Errorf("error %q does not read taskfile PATH:LINE: what (how to fix)", e)
					}
					return
				}
			}
			t.Errorf("no error on line %d with %q; got:\n%v", tt.line, tt.msg, err)
		})
	}
}

func TestParseReportsEveryProblemByLine(t *testing.T) {
	t.Parallel()
	const file = `name: x
tasks:
  b:
    run: y
    needs: [a, nope]
    timeout: forever
  a:
    run: [x, 1]
    retry: "10 5x"
    timout: 1s
`
	_, err := taskfile.Parse("many.yaml", []byte(file))
	want := []string{
		`taskfile many.yaml:5: task "b" needs "nope", which is not a task of this file (tasks: a)`,
		`taskfile many.yaml:6: timeout "forever" is not a duration (e.g. 300ms, 30s, 2m, 1h30m, or auto)`,
		`taskfile many.yaml:8: run item 1 is not a string (quote it: "1")`,
		`taskfile many.yaml:9: retry "10 5x": "5x" is not a duration (e.g. 300ms, 5s, 2m)`,
		`taskfile many.yaml:10: unknown key "timout" (did you mean "timeout"?)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("Parse error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

func TestErrorWithoutPath(t *testing.T) {
	t.Parallel()
	_, err := taskfile.Parse("", []byte("name: x\n"))
	if err == nil || err.Error() != "taskfile line 1: the file has no tasks (add tasks: with at least one task)" {
		t.Errorf("Parse error = %v", err)
	}
}
