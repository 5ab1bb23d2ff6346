package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
	queues, states, keeps := postgres.PruneRules([]store.PruneRule{
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
