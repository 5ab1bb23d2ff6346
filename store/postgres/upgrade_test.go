package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// oldRows are the rows put into a store of an older version: a run of two
// tasks, extract then load (an edge), a failed task and a succeeded one,
// each with its attempt's row, and a worker.
type oldRows struct {
	run, extract, load, failed, succeeded int64
}

// oldToken is the largest lease token the old rows hold.
const oldToken = 5

// insertOldRows writes oldRows with the SQL of the first schema (0001),
// which every later version still takes.
func insertOldRows(t *testing.T, ctx context.Context, schema string) oldRows {
	t.Helper()
	var r oldRows
	err := pgx.BeginFunc(ctx, admin(t), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+schema); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO runs (name, state) VALUES ('nightly', 'RUNNING') RETURNING id`).Scan(&r.run); err != nil {
			return err
		}
		for _, q := range []struct {
			id  *int64
			sql string
		}{
			{&r.extract, `INSERT INTO tasks (run_id, name, kind, args, queue, state, next_at)
				VALUES ($1, 'extract', 'etl', '{"n":1}', 'default', 'READY', now() - interval '1 second') RETURNING id`},
			{&r.load, `INSERT INTO tasks (run_id, name, kind, queue, state, needs_left)
				VALUES ($1, 'load', 'etl', 'default', 'PENDING', 1) RETURNING id`},
		} {
			if err := tx.QueryRow(ctx, q.sql, r.run).Scan(q.id); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO edges (run_id, from_task, to_task) VALUES ($1, $2, $3)`, r.run, r.extract, r.load); err != nil {
			return err
		}
		for _, q := range []struct {
			id  *int64
			sql string
		}{
			{&r.failed, `INSERT INTO tasks (kind, queue, state, attempt, lease_token, last_error, created_at, first_started_at, finished_at)
				VALUES ('mail', 'default', 'FAILED', 1, 4, 'smtp: refused', now() - interval '1 hour', now() - interval '1 hour', now() - interval '59 minutes')
				RETURNING id`},
			{&r.succeeded, `INSERT INTO tasks (kind, queue, state, attempt, lease_token, created_at, first_started_at, finished_at)
				VALUES ('mail', 'default', 'SUCCESS', 1, 5, now() - interval '1 hour', now() - interval '1 hour', now() - interval '59 minutes')
				RETURNING id`},
		} {
			if err := tx.QueryRow(ctx, q.sql).Scan(q.id); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome, class, error)
			VALUES ($1, 4, 1, 'old-worker', now() - interval '1 hour', now() - interval '59 minutes', 'ERROR', 'permanent', 'smtp: refused'),
				($2, 5, 1, 'old-worker', now() - interval '1 hour', now() - interval '59 minutes', 'SUCCESS', '', '')`,
			r.failed, r.succeeded); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO workers (id, host, pid, version, started_at, last_seen)
			VALUES ('old-worker', 'h1', 42, 'v0', now() - interval '2 hours', now() - interval '1 hour')`)
		return err
	})
	if err != nil {
		t.Fatalf("the old rows: %v", err)
	}
	return r
}

// TestUpgradeFromEveryVersion makes a store of each older version (its
// numbered migrations alone, as far as 0001 for the oldest), puts rows
// into it with plain SQL, and opens it with this grit: it migrates, the
// rows read back through the Store, and the run's tasks are claimed and
// finished until the run succeeds.
func TestUpgradeFromEveryVersion(t *testing.T) {
	t.Parallel()
	versions, err := postgres.Versions()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		t.Run(fmt.Sprintf("from %04d", v), func(t *testing.T) {
			t.Parallel()
			ctx := bounded(t)
			schema := newSchema(t)
			if err := postgres.MigrateThrough(ctx, admin(t), schema, v, false); err != nil {
				t.Fatalf("make a store of version %d: %v", v, err)
			}
			r := insertOldRows(t, ctx, schema)
			s := openIn(t, schema)
			if v < fairVersion { // rows written by a grit that stamps would have stamps
				checkStamped(t, ctx, schema, r)
			}
			checkUpgraded(t, ctx, s, r)
		})
	}
}

// fairVersion is the migration that stamps the tasks waiting.
const fairVersion = 32

// checkStamped: the upgrade gave the waiting task already due a stamp for
// its fair turn (migration 0032), and the PENDING one none (it is stamped
// when it comes due).
func checkStamped(t *testing.T, ctx context.Context, schema string, r oldRows) {
	t.Helper()
	var extract, load pgtype.Float8
	err := admin(t).QueryRow(ctx, `SELECT (SELECT vt FROM `+pgx.Identifier{schema}.Sanitize()+`.tasks WHERE id = $1),
		(SELECT vt FROM `+pgx.Identifier{schema}.Sanitize()+`.tasks WHERE id = $2)`, r.extract, r.load).Scan(&extract, &load)
	if err != nil || !extract.Valid || load.Valid {
		t.Fatalf("stamps after the upgrade: extract %+v, load %+v (%v), want extract's alone", extract, load, err)
	}
}

func checkUpgraded(t *testing.T, ctx context.Context, s store.Store, r oldRows) {
	t.Helper()
	got, err := s.GetTask(ctx, r.extract)
	if err != nil || got.Kind != "etl" || got.Name != "extract" || string(got.Args) != `{"n":1}` || got.State != task.Ready || got.RunID != r.run {
		t.Fatalf("extract: %+v (%v)", got, err)
	}
	list, err := s.ListTasks(ctx, task.Filter{})
	if err != nil || len(list) != 4 {
		t.Fatalf("list: %d tasks (%v), want 4", len(list), err)
	}
	as, err := s.Attempts(ctx, r.failed)
	if err != nil || len(as) != 1 || as[0].Outcome != task.OutcomeError || as[0].Error != "smtp: refused" || as[0].Worker != "old-worker" {
		t.Fatalf("the failed task's attempts: %+v (%v)", as, err)
	}
	as, err = s.Attempts(ctx, r.succeeded)
	if err != nil || len(as) != 1 || as[0].Outcome != task.OutcomeSuccess || as[0].LeaseToken != oldToken {
		t.Fatalf("the succeeded task's attempts: %+v (%v)", as, err)
	}
	ws, err := s.Workers(ctx)
	if err != nil || len(ws) != 1 || ws[0].ID != "old-worker" || ws[0].PID != 42 {
		t.Fatalf("workers: %+v (%v)", ws, err)
	}
	if es, err := s.Edges(ctx, r.run); err != nil || len(es) != 1 {
		t.Fatalf("the run's edges: %+v (%v)", es, err)
	}
	for _, id := range []int64{r.extract, r.load} {
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
	run, err := s.GetRun(ctx, r.run)
	if err != nil || run.State != task.Success {
		t.Fatalf("the run: %+v (%v), want it SUCCESS", run, err)
	}
	as, err = s.Attempts(ctx, r.extract)
	if err != nil || len(as) != 1 || as[0].Outcome != task.OutcomeSuccess || as[0].Worker != "new-worker" {
		t.Fatalf("extract's attempts: %+v (%v)", as, err)
	}
}
