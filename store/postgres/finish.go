package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Finish ends attempts in one transaction: one statement moves the tasks of
// a whole batch and closes their attempts, then the dependents and runs of
// the tasks that ended move. An item whose task is not RUNNING under its
// Token gets task.ErrLeaseLost and writes nothing; an item with a state
// Finish cannot set gets task.ErrInvalid; an item the database refuses (a
// trigger, a constraint) gets task.ErrRefused, and the others are written
// (store.Isolate).
func (s *Store) Finish(ctx context.Context, fs []store.Finish) ([]error, error) {
	errs, todo := store.CheckFinishes(fs)
	if len(todo) == 0 {
		return errs, nil
	}
	applied := make(map[int]bool, len(todo))
	try := func(items []int) ([]int, error) { return s.finishItems(ctx, fs, items, applied) }
	if err := store.Isolate(fs, errs, todo, try, refused); err != nil {
		return nil, fmt.Errorf("finish: %w", err)
	}
	for _, i := range todo {
		if errs[i] == nil && !applied[i] {
			errs[i] = fmt.Errorf("finish task %d with lease token %d: %w", fs[i].TaskID, fs[i].Token, task.ErrLeaseLost)
		}
	}
	return errs, nil
}

// finishItems writes the items of fs that items names, marking in applied
// those that applied. It commits in two steps (succeedAlone's statement,
// then the transaction of the rest), so when the second fails it returns
// the items the first did not write.
func (s *Store) finishItems(ctx context.Context, fs []store.Finish, items []int, applied map[int]bool) ([]int, error) {
	done, rest, err := s.succeedAlone(ctx, fs, items)
	if err != nil {
		return items, err
	}
	maps.Copy(applied, done)
	if len(rest) == 0 {
		return nil, nil
	}
	var more map[int]bool
	err = s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		more, err = s.finish(ctx, tx, fs, rest)
		return err
	})
	if err != nil {
		return rest, err
	}
	maps.Copy(applied, more)
	return nil, nil
}

// refused reports whether err is the database refusing what a statement
// would write, for the data of its rows: a trigger that raised (class P0),
// a constraint (23), a bad value (22), a routine's error (38, 39, 2F), a
// row past a limit (54), a triggered data change (27), a view's check
// (44). Another row's write may well go through, so a batch is split to
// find the rows at fault. A lost connection, a database shutting down,
// read-only or out of room, a conflict or a timeout fail every row alike.
func refused(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || len(pe.Code) < 2 {
		return false
	}
	switch pe.Code[:2] {
	case "P0", "23", "22", "38", "39", "2F", "54", "27", "44":
		return true
	}
	return false
}

// succeedAlone finishes, in one statement that is its own transaction, the
// plain successes of the batch whose tasks are in no run: nothing else
// moves then (no dependents, no run, nothing due), so the transaction
// finish needs otherwise (three round trips) is not. It returns which items
// it applied and the items left for finish: the other kinds of results,
// the successes it did not move (of tasks in a run, or whose lease was
// lost: finish tells them apart), and every item when a task is named
// twice.
func (s *Store) succeedAlone(ctx context.Context, fs []store.Finish, todo []int) (applied map[int]bool, rest []int, err error) {
	applied = make(map[int]bool, len(todo))
	seen := make(map[int64]bool, len(todo))
	var plain []int
	for _, i := range todo {
		if seen[fs[i].TaskID] {
			return applied, todo, nil
		}
		seen[fs[i].TaskID] = true
		if fs[i].PlainSuccess() {
			plain = append(plain, i)
		} else {
			rest = append(rest, i)
		}
	}
	if len(plain) == 0 {
		return applied, rest, nil
	}
	ids, tokens, ended := make([]int64, len(plain)), make([]int64, len(plain)), make([]pgtype.Timestamptz, len(plain))
	for k, i := range plain {
		ids[k], tokens[k], ended[k] = fs[i].TaskID, fs[i].Token, tstz(fs[i].Attempt.EndedAt)
	}
	moved := map[int64]int64{}
	err = retrying(ctx, func(ctx context.Context) error {
		clear(moved)
		return collectMoved(s.pool.Query(ctx, s.sql(succeedAloneSQL), ids, tokens, ended))(moved)
	})
	if err != nil {
		return nil, nil, err
	}
	for _, i := range plain {
		if _, ok := moved[fs[i].TaskID]; ok {
			applied[i] = true
		} else {
			rest = append(rest, i)
		}
	}
	slices.Sort(rest)
	return applied, rest, nil
}

// succeedAloneSQL is succeedSQL for the tasks of the batch in no run, as
// the function succeed_alone (functions/succeed_alone.sql), planned once per
// connection. It returns the tasks it moved, with run 0, and writes nothing
// for the others: tasks in a run, and tasks whose lease was lost, which
// finish tells apart.
const succeedAloneSQL = `SELECT moved_id, moved_run FROM $S.succeed_alone($1, $2, $3)`

// finish applies the items todo of fs and returns which applied. A task
// named twice is finished in a later round, where its second item meets the
// state the first left (and so, normally, loses): one UPDATE cannot change
// a row twice.
func (s *Store) finish(ctx context.Context, tx pgx.Tx, fs []store.Finish, todo []int) (map[int]bool, error) {
	applied := make(map[int]bool, len(todo))
	wake := false
	for _, round := range store.Rounds(fs, todo) {
		moved, err := s.finishTasks(ctx, tx, fs, round)
		if err != nil {
			return nil, err
		}
		if err := s.wakeAwaiting(ctx, tx, fs, round, moved); err != nil {
			return nil, err
		}
		due, err := s.awaits(ctx, tx, fs, round, moved)
		if err != nil {
			return nil, err
		}
		wake = wake || due
		var ended []int
		var enqueue []task.NewTask
		events := map[int64][]task.Event{} // by run (0: none)
		for _, i := range round {
			if _, ok := moved[fs[i].TaskID]; ok {
				enqueue = append(enqueue, store.FinishEnqueues(fs[i])...)
			}
			run, ok := moved[fs[i].TaskID]
			applied[i] = applied[i] || ok
			wake = wake || ok && fs[i].State.Waiting()
			if ok && run != 0 {
				ended = append(ended, i)
			}
			if ok && len(fs[i].Publish) > 0 {
				events[run] = append(events[run], fs[i].Publish...)
			}
		}
		// Deliveries join the run of the task that published them, before
		// the run is settled: a run ends when they have too. publish
		// notifies, as they are due at once.
		for _, run := range slices.Sorted(maps.Keys(events)) {
			if _, err := s.publish(ctx, tx, run, events[run]); err != nil {
				return nil, err
			}
		}
		if len(enqueue) > 0 {
			if _, err := s.enqueueIn(ctx, tx, 0, enqueue); err != nil {
				return nil, err
			}
		}
		promoted, err := s.propagateFinish(ctx, tx, fs, ended, moved)
		if err != nil {
			return nil, err
		}
		wake = wake || promoted
	}
	if wake {
		return applied, s.notify(ctx, tx)
	}
	return applied, nil
}

// finishTasksSQL moves the tasks of a round and writes their attempts, in
// one statement. The attempt's row is written here, once, from the task
// row as it was (o: its number, worker and start) and the item. A task
// taken over by Rescue has no open attempt (started_at is NULL: the rescue
// wrote its interrupted attempt): that attempt keeps its outcome and gets
// the rescuer's delay and decision. A claim given back before its attempt
// began (waited) writes no row: it is counted in the task's waits. It
// returns the run (0: none) of each task that moved.
//
// The compare-and-set on state and token is one CASE that names both
// tables, so the planner takes it as a join condition, never as a filter
// on tasks alone: a filter state = 'RUNNING', estimated from statistics
// taken while few tasks ran, makes tasks look small enough to be the outer
// side of the join, and the batch is then rescanned once for every RUNNING
// task. With no filter of its own, tasks can only be reached from the
// batch, by primary key.
const finishTasksSQL = `WITH f AS (
	SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::timestamptz[], $5::int[],
		$6::text[], $7::text[], $8::int[], $9::bigint[], $10::timestamptz[], $11::text[],
		$12::text[], $13::text[], $14::text[], $15::int[], $16::text[], $17::text[],
		$18::bigint[], $19::text[], $20::int[], $21::text[], $22::bigint[], $23::text[], $24::int[], $25::text[], $26::int[])
	AS f (id, token, state, next_at, refund, error, fingerprint, streak, prev_delay_ns,
		ended_at, outcome, class, a_error, a_fingerprint, exit_code, signal, output,
		delay_ns, decision, deferred, trace, timeout_ns, timeout_source, waited, awaits, snoozed)
), moved AS (
	UPDATE $S.tasks t SET state = f.state,
		next_at = CASE WHEN f.state IN ('READY', 'RETRYING', 'SENSING') THEN coalesce(f.next_at, now()) END,
		finished_at = CASE WHEN f.state IN ('READY', 'RETRYING', 'SENSING') THEN NULL ELSE now() END,
		attempt = greatest(t.attempt - f.refund, 0), deferrals = t.deferrals + f.deferred, last_error = f.error,
		waits = t.waits + f.waited, snoozes = t.snoozes + f.snoozed, awaits = f.awaits, awaits_left = 0,
		fingerprint = f.fingerprint, streak = f.streak, prev_delay_ns = f.prev_delay_ns,
		lease_owner = '', lease_expires = NULL, started_at = NULL, attempt_trace = f.trace
	FROM f JOIN $S.tasks o ON o.id = f.id
	WHERE t.id = f.id AND CASE t.state WHEN 'RUNNING' THEN t.lease_token = f.token END
	RETURNING t.id, t.run_id, o.attempt, o.lease_owner, o.started_at
), closed AS (
	INSERT INTO $S.attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome,
		class, error, fingerprint, exit_code, signal, output, delay_ns, decision, timeout_ns, timeout_source)
	SELECT f.id, f.token, moved.attempt, moved.lease_owner, moved.started_at, coalesce(f.ended_at, now()),
		f.outcome, f.class, f.a_error, f.a_fingerprint, f.exit_code, f.signal, f.output, f.delay_ns, f.decision,
		f.timeout_ns, f.timeout_source
	FROM f JOIN moved ON moved.id = f.id
	WHERE moved.started_at IS NOT NULL AND f.waited = 0
), rescued AS (
	UPDATE $S.attempts a SET delay_ns = f.delay_ns, decision = f.decision
	FROM f JOIN moved ON moved.id = f.id
	WHERE moved.started_at IS NULL AND f.waited = 0 AND a.task_id = f.id
		AND a.lease_token = (SELECT max(y.lease_token) FROM $S.attempts y WHERE y.task_id = f.id)
)
SELECT id, coalesce(run_id, 0) FROM moved`

// succeedSQL is finishTasksSQL for plain successes (store.Finish.PlainSuccess):
// three columns to send and unpack instead of twenty, and no attempt row.
// A plain success's attempt stays on the task row, as it was while it ran
// (attempt, lease_token, lease_owner, started_at), and ends at finished_at,
// which is the time the attempt ended; Attempts reads it from there. So
// the success writes the task row alone: no row and index entry in
// attempts, and no second look at the task for its old values. A task
// taken over by Rescue (started_at NULL) has its interrupted attempt's row
// already, which keeps its outcome and gets an empty decision.
const succeedSQL = `WITH f AS (
	SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::timestamptz[]) AS f (id, token, ended_at)
), moved AS (
	UPDATE $S.tasks t SET state = 'SUCCESS', next_at = NULL, finished_at = coalesce(f.ended_at, now()),
		last_error = '', fingerprint = '', streak = 0, prev_delay_ns = 0, lease_expires = NULL
	FROM f
	WHERE t.id = f.id AND CASE t.state WHEN 'RUNNING' THEN t.lease_token = f.token END
	RETURNING t.id, t.run_id, t.started_at
), rescued AS (
	UPDATE $S.attempts a SET delay_ns = 0, decision = ''
	FROM f JOIN moved ON moved.id = f.id
	WHERE moved.started_at IS NULL AND a.task_id = f.id
		AND a.lease_token = (SELECT max(y.lease_token) FROM $S.attempts y WHERE y.task_id = f.id)
)
SELECT id, coalesce(run_id, 0) FROM moved`

// finishTasks applies the items of a round, each only if its task is
// RUNNING under its token, and returns the run (0: none) of each task that
// moved.
func (s *Store) finishTasks(ctx context.Context, tx pgx.Tx, fs []store.Finish, items []int) (map[int64]int64, error) {
	moved := make(map[int64]int64, len(items))
	a := newFinishArgs(0)
	var ids, tokens []int64
	var ended []pgtype.Timestamptz
	for _, i := range items {
		if fs[i].PlainSuccess() {
			ids, tokens, ended = append(ids, fs[i].TaskID), append(tokens, fs[i].Token), append(ended, tstz(fs[i].Attempt.EndedAt))
		} else {
			a.add(fs[i])
		}
	}
	if len(ids) > 0 {
		if err := collectMoved(tx.Query(ctx, s.sql(succeedSQL), ids, tokens, ended))(moved); err != nil {
			return nil, err
		}
	}
	if len(a.ids) > 0 {
		if err := collectMoved(tx.Query(ctx, s.sql(finishTasksSQL), a.list()...))(moved); err != nil {
			return nil, err
		}
	}
	return moved, nil
}

// collectMoved reads the (id, run) rows of a finish statement into moved.
func collectMoved(rows pgx.Rows, err error) func(moved map[int64]int64) error {
	return func(moved map[int64]int64) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, run int64
			if err := rows.Scan(&id, &run); err != nil {
				return err
			}
			moved[id] = run
		}
		return rows.Err()
	}
}

// finishArgs are the columns of finishTasksSQL's f, as arrays.
type finishArgs struct {
	ids, tokens, prevDelays, delays, timeouts []int64
	states, errs, fps, outcomes, classes      []string
	aErrs, aFPs, signals, outputs, decisions  []string
	traces, timeoutSources                    []string
	awaits                                    []pgtype.Text
	nextAts, endeds                           []pgtype.Timestamptz
	refunds, streaks, deferreds, waiteds      []int32
	snoozeds                                  []int32
	exits                                     []pgtype.Int4
}

func newFinishArgs(n int) *finishArgs {
	return &finishArgs{
		ids: make([]int64, 0, n), tokens: make([]int64, 0, n), prevDelays: make([]int64, 0, n), delays: make([]int64, 0, n),
		states: make([]string, 0, n), errs: make([]string, 0, n), fps: make([]string, 0, n), outcomes: make([]string, 0, n),
		classes: make([]string, 0, n), aErrs: make([]string, 0, n), aFPs: make([]string, 0, n), signals: make([]string, 0, n),
		outputs: make([]string, 0, n), decisions: make([]string, 0, n), nextAts: make([]pgtype.Timestamptz, 0, n),
		endeds: make([]pgtype.Timestamptz, 0, n), refunds: make([]int32, 0, n), streaks: make([]int32, 0, n),
		deferreds: make([]int32, 0, n), waiteds: make([]int32, 0, n), traces: make([]string, 0, n),
		timeouts: make([]int64, 0, n), timeoutSources: make([]string, 0, n),
		exits: make([]pgtype.Int4, 0, n), awaits: make([]pgtype.Text, 0, n), snoozeds: make([]int32, 0, n),
	}
}

func (a *finishArgs) add(f store.Finish) {
	refund, deferred, waited := int32(0), int32(0), int32(0)
	if f.Refund || f.Waited {
		refund = 1
	}
	if f.Deferred {
		deferred = 1
	}
	if f.Waited {
		waited = 1
	}
	at := f.Attempt
	exit := pgtype.Int4{}
	if at.ExitCode != nil {
		exit = pgtype.Int4{Int32: int32(*at.ExitCode), Valid: true}
	}
	a.ids, a.tokens, a.states = append(a.ids, f.TaskID), append(a.tokens, f.Token), append(a.states, string(f.State))
	a.nextAts, a.refunds = append(a.nextAts, tstz(f.NextAt)), append(a.refunds, refund)
	a.errs, a.fps, a.streaks = append(a.errs, f.Error), append(a.fps, f.Fingerprint), append(a.streaks, int32(f.Streak))
	a.prevDelays, a.endeds = append(a.prevDelays, int64(f.PrevDelay)), append(a.endeds, tstz(at.EndedAt))
	a.outcomes, a.classes = append(a.outcomes, string(f.Outcome())), append(a.classes, at.Class)
	a.aErrs, a.aFPs, a.exits = append(a.aErrs, at.Error), append(a.aFPs, at.Fingerprint), append(a.exits, exit)
	a.signals, a.outputs = append(a.signals, at.Signal), append(a.outputs, at.Output)
	a.delays, a.decisions = append(a.delays, int64(at.Delay)), append(a.decisions, at.Decision)
	a.deferreds, a.traces = append(a.deferreds, deferred), append(a.traces, f.Trace)
	a.timeouts, a.timeoutSources = append(a.timeouts, int64(at.Timeout)), append(a.timeoutSources, at.TimeoutSource)
	a.waiteds = append(a.waiteds, waited)
	a.awaits = append(a.awaits, pgtype.Text{String: f.Awaits, Valid: f.Awaits != ""})
	snoozed := int32(0)
	if f.Snoozed() {
		snoozed = 1
	}
	a.snoozeds = append(a.snoozeds, snoozed)
}

func (a *finishArgs) list() []any {
	return []any{a.ids, a.tokens, a.states, a.nextAts, a.refunds, a.errs, a.fps, a.streaks,
		a.prevDelays, a.endeds, a.outcomes, a.classes, a.aErrs, a.aFPs, a.exits, a.signals,
		a.outputs, a.delays, a.decisions, a.deferreds, a.traces, a.timeouts, a.timeoutSources, a.waiteds, a.awaits, a.snoozeds}
}
