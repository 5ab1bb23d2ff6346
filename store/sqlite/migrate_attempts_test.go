package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestUpgradeMovesOpenAttemptsToTheTaskRow: a store written before
// migration 0017 kept every attempt in a row of its own, the open ones
// too. After the upgrade, a task that was RUNNING with its attempt open
// there finishes with one row for that attempt, started when it was (the
// old open row is moved, not left beside a new one), whether it ends in a
// plain success or otherwise; a task a rescue took over still has only
// its interrupted attempt, and finished tasks keep their rows.
func TestUpgradeMovesOpenAttemptsToTheTaskRow(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "grit.db")
	ctx := t.Context()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	migrateBefore(t, db, 17)
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at, ended := started.UnixMicro(), started.Add(time.Second).UnixMicro()
	// Tasks 1 and 2 run, their attempts open under their tokens; task 3
	// was taken over by a rescue (token 6 interrupted, held under 7);
	// task 4 succeeded.
	for _, q := range []string{
		`INSERT INTO tasks (id, kind, queue, state, attempt, lease_owner, lease_token, lease_expires, created_at, first_started_at)
		VALUES (1, 'k', 'default', 'RUNNING', 1, 'w', 1, ?1 + 3600000000, ?1, ?1),
			(2, 'k', 'default', 'RUNNING', 1, 'w', 2, ?1 + 3600000000, ?1, ?1),
			(3, 'k', 'default', 'RUNNING', 1, 'rescuer', 7, ?1 + 3600000000, ?1, ?1)`,
		`INSERT INTO tasks (id, kind, queue, state, attempt, lease_token, created_at, first_started_at, finished_at)
		VALUES (4, 'k', 'default', 'SUCCESS', 1, 4, ?1, ?1, ?2)`,
		`INSERT INTO attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome)
		VALUES (1, 1, 1, 'w', ?1, NULL, 'RUNNING'), (2, 2, 1, 'w', ?1, NULL, 'RUNNING'),
			(3, 6, 1, 'gone', ?1, ?2, 'INTERRUPTED'), (4, 4, 1, 'w', ?1, ?2, 'SUCCESS')`,
		`UPDATE lease_tokens SET last = 7`,
	} {
		if _, err := db.ExecContext(ctx, q, at, ended); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := OpenConfig(ctx, Config{Path: path})
	if err != nil {
		t.Fatalf("open after the upgrade: %v", err)
	}
	defer s.Close()

	for _, id := range []int64{1, 2} {
		as, err := s.Attempts(ctx, id)
		if err != nil || len(as) != 1 || as[0].Outcome != task.OutcomeRunning || !as[0].StartedAt.Equal(started) ||
			as[0].Worker != "w" || as[0].LeaseToken != id {
			t.Fatalf("task %d's attempts after the upgrade: %+v (%v), want the one open attempt of w started at %v", id, as, err, started)
		}
	}
	errs, err := s.Finish(ctx, []store.Finish{
		{TaskID: 1, Token: 1, State: task.Success},
		{TaskID: 2, Token: 2, State: task.Retrying, Error: "blip", Attempt: task.Attempt{Error: "blip", Delay: time.Second}},
		{TaskID: 3, Token: 7, State: task.Retrying, Attempt: task.Attempt{Delay: time.Minute, Decision: "retry"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("finish %d: %v", i, err)
		}
	}
	wantAttempt := func(id int64, want task.Attempt) {
		t.Helper()
		as, err := s.Attempts(ctx, id)
		if err != nil || len(as) != 1 {
			t.Fatalf("task %d's attempts: %+v (%v), want one", id, as, err)
		}
		a := as[0]
		if a.Outcome != want.Outcome || !a.StartedAt.Equal(want.StartedAt) || a.Worker != want.Worker ||
			a.LeaseToken != want.LeaseToken || a.Delay != want.Delay || a.Decision != want.Decision || a.EndedAt.IsZero() {
			t.Errorf("task %d's attempt %+v, want %+v, ended", id, a, want)
		}
	}
	wantAttempt(1, task.Attempt{Outcome: task.OutcomeSuccess, StartedAt: started, Worker: "w", LeaseToken: 1})
	wantAttempt(2, task.Attempt{Outcome: task.OutcomeError, StartedAt: started, Worker: "w", LeaseToken: 2, Delay: time.Second})
	wantAttempt(3, task.Attempt{Outcome: task.OutcomeInterrupted, StartedAt: started, Worker: "gone", LeaseToken: 6,
		Delay: time.Minute, Decision: "retry"})
	wantAttempt(4, task.Attempt{Outcome: task.OutcomeSuccess, StartedAt: started, Worker: "w", LeaseToken: 4})
	ds, err := s.SuccessDurations(ctx, "k", "", 10)
	if err != nil || len(ds) != 2 || ds[1] != time.Second {
		t.Errorf("success durations %v (%v), want the new success's and task 4's (1s), oldest last", ds, err)
	}
}

// migrateBefore applies the embedded migrations older than version, as
// a grit of that time left the store.
func migrateBefore(t *testing.T, db *sql.DB, version int) {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := appliedVersions(t.Context(), tx); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version < version {
			if err := apply(t.Context(), tx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
