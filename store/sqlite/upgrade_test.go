package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The rows put into a store of an older version: a run (1) of two tasks,
// extract (1) then load (2), a failed task (3) and a succeeded one (4),
// each with its attempt's row, and a worker. oldToken is the largest
// lease token they hold.
const (
	oldRun, oldExtract, oldLoad, oldFailed, oldSucceeded = 1, 1, 2, 3, 4
	oldToken                                             = 5
)

// insertOldRows writes the old rows with the SQL of the first schema
// (0001), which every later version still takes. From 0006 on, the store
// keeps the largest token it gave in lease_tokens, as a grit of that
// version would have when it gave the old ones.
func insertOldRows(t *testing.T, ctx context.Context, db *sql.DB, version int) {
	t.Helper()
	now := time.Now()
	hourAgo, ended := now.Add(-time.Hour).UnixMicro(), now.Add(-59*time.Minute).UnixMicro()
	qs := []string{
		`INSERT INTO runs (id, name, state, created_at) VALUES (1, 'nightly', 'RUNNING', ?1)`,
		`INSERT INTO tasks (id, run_id, name, kind, args, queue, state, next_at, created_at)
			VALUES (1, 1, 'extract', 'etl', '{"n":1}', 'default', 'READY', ?1, ?1)`,
		`INSERT INTO tasks (id, run_id, name, kind, queue, state, needs_left, created_at)
			VALUES (2, 1, 'load', 'etl', 'default', 'PENDING', 1, ?1)`,
		`INSERT INTO edges (run_id, from_task, to_task) VALUES (1, 1, 2)`,
		`INSERT INTO tasks (id, kind, queue, state, attempt, lease_token, last_error, created_at, first_started_at, finished_at)
			VALUES (3, 'mail', 'default', 'FAILED', 1, 4, 'smtp: refused', ?1, ?1, ?2),
				(4, 'mail', 'default', 'SUCCESS', 1, 5, '', ?1, ?1, ?2)`,
		`INSERT INTO attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome, class, error)
			VALUES (3, 4, 1, 'old-worker', ?1, ?2, 'ERROR', 'permanent', 'smtp: refused'),
				(4, 5, 1, 'old-worker', ?1, ?2, 'SUCCESS', '', '')`,
		`INSERT INTO workers (id, host, pid, version, started_at, last_seen) VALUES ('old-worker', 'h1', 42, 'v0', ?1, ?2)`,
	}
	if version >= 6 {
		qs = append(qs, `UPDATE lease_tokens SET last = 5`)
	}
	for _, q := range qs {
		if _, err := db.ExecContext(ctx, q, hourAgo, ended); err != nil {
			t.Fatalf("the old rows: %s: %v", q, err)
		}
	}
}

// TestUpgradeFromEveryVersion makes a store of each older version (its
// migrations up to it, as far as 0001 for the oldest), puts rows into it
// with plain SQL, and opens it with this grit: it migrates, the rows read
// back through the Store, and the run's tasks are claimed and finished
// until the run succeeds.
func TestUpgradeFromEveryVersion(t *testing.T) {
	t.Parallel()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		t.Run(fmt.Sprintf("from %04d", m.Version), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "grit.db")
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			migrateBefore(t, db, m.Version+1)
			insertOldRows(t, ctx, db, m.Version)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			s, err := OpenConfig(ctx, Config{Path: path})
			if err != nil {
				t.Fatalf("open after the upgrade: %v", err)
			}
			defer s.Close()
			if m.Version < fairVersion { // rows written by a grit that stamps would have stamps
				checkStamped(t, ctx, s)
			}
			checkUpgraded(t, ctx, s)
		})
	}
}

// fairVersion is the migration that stamps the tasks waiting.
const fairVersion = 22

// checkStamped: the upgrade gave the waiting task already due a stamp for
// its fair turn (migration 0022), and the PENDING one none (it is stamped
// when it comes due).
func checkStamped(t *testing.T, ctx context.Context, s *Store) {
	t.Helper()
	var extract, load sql.NullFloat64
	err := s.queryRow(ctx, `SELECT (SELECT vt FROM tasks WHERE id = ?), (SELECT vt FROM tasks WHERE id = ?)`,
		oldExtract, oldLoad).Scan(&extract, &load)
	if err != nil || !extract.Valid || load.Valid {
		t.Fatalf("stamps after the upgrade: extract %+v, load %+v (%v), want extract's alone", extract, load, err)
	}
}

func checkUpgraded(t *testing.T, ctx context.Context, s store.Store) {
	t.Helper()
	got, err := s.GetTask(ctx, oldExtract)
	if err != nil || got.Kind != "etl" || got.Name != "extract" || string(got.Args) != `{"n":1}` || got.State != task.Ready || got.RunID != oldRun {
		t.Fatalf("extract: %+v (%v)", got, err)
	}
	list, err := s.ListTasks(ctx, task.Filter{})
	if err != nil || len(list) != 4 {
		t.Fatalf("list: %d tasks (%v), want 4", len(list), err)
	}
	as, err := s.Attempts(ctx, oldFailed)
	if err != nil || len(as) != 1 || as[0].Outcome != task.OutcomeError || as[0].Error != "smtp: refused" || as[0].Worker != "old-worker" {
		t.Fatalf("the failed task's attempts: %+v (%v)", as, err)
	}
	as, err = s.Attempts(ctx, oldSucceeded)
	if err != nil || len(as) != 1 || as[0].Outcome != task.OutcomeSuccess || as[0].LeaseToken != oldToken {
		t.Fatalf("the succeeded task's attempts: %+v (%v)", as, err)
	}
	ws, err := s.Workers(ctx)
	if err != nil || len(ws) != 1 || ws[0].ID != "old-worker" || ws[0].PID != 42 {
		t.Fatalf("workers: %+v (%v)", ws, err)
	}
	if es, err := s.Edges(ctx, oldRun); err != nil || len(es) != 1 {
		t.Fatalf("the run's edges: %+v (%v)", es, err)
	}
	for _, id := range []int64{oldExtract, oldLoad} {
		claimed, err := s.Claim(ctx, store.ClaimRequest{Worker: "new-worker", Limit: 10, Lease: time.Minute})
		if err != nil || len(claimed) != 1 || claimed[0].ID != id {
			t.Fatalf("claim: %+v (%v), want task %d alone", claimed, err, id)
		}
		if claimed[0].LeaseToken <= oldToken {
			t.Fatalf("claimed under token %d, not past the old tokens (%d)", claimed[0].LeaseToken, oldToken)
		}
		errs, err := s.Finish(ctx, []store.Finish{{TaskID: id, Token: claimed[0].LeaseToken, State: task.Success}})
		if err != nil || errs[0] != nil {
			t.Fatalf("finish task %d: %v %v", id, err, errs)
		}
	}
	run, err := s.GetRun(ctx, oldRun)
	if err != nil || run.State != task.Success {
		t.Fatalf("the run: %+v (%v), want it SUCCESS", run, err)
	}
	as, err = s.Attempts(ctx, oldExtract)
	if err != nil || len(as) != 1 || as[0].Outcome != task.OutcomeSuccess || as[0].Worker != "new-worker" {
		t.Fatalf("extract's attempts: %+v (%v)", as, err)
	}
}
