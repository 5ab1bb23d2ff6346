package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// TestPruneRoundUsesIndexes: a round finds its tasks among 50,000 through
// indexes that hold the finished states alone (tasks_success, a probe per
// kind and name, and tasks_finished) and deletes them and their attempts
// by key: it reads what it deletes, not every task. The statement runs
// in a transaction that is rolled back, on a connection that sends its
// plans.
func TestPruneRoundUsesIndexes(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	openIn(t, schema)
	ctx := bounded(t)
	fillConsole(t, ctx, schema, 50000)
	if _, err := admin(t).Exec(ctx, `ANALYZE `+pgx.Identifier{schema, "tasks"}.Sanitize()+`, `+
		pgx.Identifier{schema, "attempts"}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	conn, plans := explainingConn(t, ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	queues, states, keeps := postgres.PruneRules([]retention.Rule{
		{State: task.Success, Keep: 24 * time.Hour}, {State: task.Failed, Keep: 24 * time.Hour},
	})
	plans()
	var tasks, attempts int
	var runs []int64
	q := strings.ReplaceAll(postgres.PruneTasksSQL, "$S.", pgx.Identifier{schema}.Sanitize()+".")
	if err := tx.QueryRow(ctx, q, 100, queues, states, keeps).Scan(&tasks, &attempts, &runs); err != nil {
		t.Fatal(err)
	}
	if tasks != 100 {
		t.Errorf("a round of 100 deleted %d tasks, want 100", tasks)
	}
	all := plans()
	for _, want := range []string{"using tasks_success", "using tasks_finished"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the plan:\n%s", want, all)
		}
	}
	for _, bad := range []string{"Seq Scan on tasks", "Seq Scan on attempts", "Hash Join"} {
		if strings.Contains(all, bad) {
			t.Errorf("%q in the plan:\n%s", bad, all)
		}
	}
}

// TestPruneRoundsSharingARunLeaveItNotEmpty: two rounds at once each
// delete one of a run's last two tasks. The first to look for the run's
// tasks sees the other's task, not yet deleted for it, and keeps the run;
// the second must then wait for the first to commit, and see the run
// empty, rather than keep it too and leave it, empty, for ever.
func TestPruneRoundsSharingARunLeaveItNotEmpty(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openIn(t, schema)
	ctx := bounded(t)
	r, err := s.SubmitRun(ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a", Kind: "a"}, {Name: "b", Kind: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Lease: time.Minute, Limit: 2})
	if err != nil || len(ts) != 2 {
		t.Fatalf("claim: %d tasks (%v), want 2", len(ts), err)
	}
	for _, c := range ts {
		if errs, err := s.Finish(ctx, []store.Finish{{TaskID: c.ID, Token: c.LeaseToken, State: task.Success}}); err != nil || errs[0] != nil {
			t.Fatalf("finish %d: %v %v", c.ID, err, errs)
		}
	}
	tasks := pgx.Identifier{schema, "tasks"}.Sanitize()
	var txs [2]pgx.Tx
	for i, c := range ts {
		if txs[i], err = s.Pool().Begin(ctx); err != nil {
			t.Fatal(err)
		}
		defer txs[i].Rollback(ctx)
		if _, err := txs[i].Exec(ctx, `DELETE FROM `+tasks+` WHERE id = $1`, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.PruneRuns(ctx, txs[0], []int64{r.ID}); err != nil || n != 0 {
		t.Fatalf("first round: %d runs deleted (%v), want 0: the other's task is still there for it", n, err)
	}
	second := make(chan int, 1)
	go func() {
		n, err := s.PruneRuns(ctx, txs[1], []int64{r.ID})
		if err != nil {
			t.Error(err)
		}
		second <- n
	}()
	for waiting := false; !waiting; {
		select {
		case n := <-second:
			t.Fatalf("second round: %d runs deleted before the first committed, want it to wait for the run's lock", n)
		case <-ctx.Done():
			t.Fatal("the second round never waited for the run's lock")
		case <-time.After(2 * time.Millisecond):
		}
		if err := admin(t).QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_locks WHERE NOT granted AND pid = $1)`,
			txs[1].Conn().PgConn().PID()).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	if err := txs[0].Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := <-second; n != 1 {
		t.Errorf("second round: %d runs deleted, want 1: the run is empty once the first committed", n)
	}
	if err := txs[1].Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRun(ctx, r.ID); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("get run %d: %v, want not found", r.ID, err)
	}
}

// BenchmarkPruneRound times a round of 500 on a store of 200,000 tasks
// (fillConsole's mix, analyzed), each round deleting the 500 oldest
// successes and failures due.
func BenchmarkPruneRound(b *testing.B) {
	schema := newSchema(b)
	s := openIn(b, schema)
	ctx := context.Background()
	fillConsole(b, ctx, schema, 200000)
	if _, err := admin(b).Exec(ctx, `VACUUM ANALYZE `+pgx.Identifier{schema, "tasks"}.Sanitize()); err != nil {
		b.Fatal(err)
	}
	req := store.PruneRequest{Limit: 500, Rules: []retention.Rule{
		{State: task.Success, Keep: time.Hour}, {State: task.Failed, Keep: time.Hour},
	}}
	for b.Loop() {
		got, err := s.Prune(ctx, req)
		if err != nil || got.Tasks != 500 {
			b.Fatalf("round: %+v, %v; want 500 tasks", got, err)
		}
	}
}
