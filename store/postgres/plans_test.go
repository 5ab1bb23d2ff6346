package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/task"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// explainingConn connects as the store's connections do, with auto_explain
// sending the plan of every statement, nested ones too, as a notice. plans
// returns the plans received since its last call.
func explainingConn(t *testing.T, ctx context.Context) (conn *pgx.Conn, plans func() string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	cfg, err := pgx.ParseConfig(testDSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["plan_cache_mode"] = "force_custom_plan" // as the store's connections
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		got = append(got, n.Message)
		mu.Unlock()
	}
	conn, err = pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.WithoutCancel(ctx)) })
	for _, q := range []string{
		`LOAD 'auto_explain'`,
		`SET auto_explain.log_min_duration = 0`,
		`SET auto_explain.log_nested_statements = on`,
		`SET auto_explain.log_level = notice`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v (auto_explain ships with PostgreSQL; the test connects as a superuser)", q, err)
		}
	}
	return conn, func() string {
		mu.Lock()
		defer mu.Unlock()
		all := strings.Join(got, "\n")
		got = nil
		return all
	}
}

// TestHotPlansStayLookups checks the plans of claim_tasks (with
// stamp_due's) and succeed_alone, which a connection makes once, at its first call of each.
// Made while the tasks table is empty, they must still be the claim index's
// walk and primary key lookups once it holds thousands of tasks that were
// never analyzed: no sequential scan, no hash or merge join. The plans are
// read with auto_explain, which sends each as a notice.
func TestHotPlansStayLookups(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openIn(t, schema)
	ctx := bounded(t)

	conn, plans := explainingConn(t, ctx)
	sch := pgx.Identifier{schema}.Sanitize()
	claimAndSucceed := func(want int) {
		t.Helper()
		ids, tokens := []int64{}, []int64{}
		rows, err := conn.Query(ctx, `SELECT id, lease_token FROM `+sch+`.claim_tasks('w', 60000000, 5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1000)`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, token int64
			if err := rows.Scan(&id, &token); err != nil {
				t.Fatal(err)
			}
			ids, tokens = append(ids, id), append(tokens, token)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(ids) != want {
			t.Fatalf("claimed %d tasks, want %d", len(ids), want)
		}
		var moved int
		ended := make([]*time.Time, len(ids)) // NULL: now()
		err = conn.QueryRow(ctx, `SELECT count(*) FROM `+sch+`.succeed_alone($1, $2, $3)`, ids, tokens, ended).Scan(&moved)
		if err != nil {
			t.Fatal(err)
		}
		if moved != want {
			t.Fatalf("%d successes recorded, want %d", moved, want)
		}
	}

	claimAndSucceed(0) // the plans are made now, on an empty table
	enqueueN(t, s, 20000)
	plans()
	claimAndSucceed(5)

	all := plans()
	for _, want := range []string{"Index Scan using tasks_fair", "Index Scan using tasks_pkey", "tasks_unstamped"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the plans:\n%s", want, all)
		}
	}
	for _, bad := range []string{"Seq Scan", "Hash Join", "Merge Join"} {
		if strings.Contains(all, bad) {
			t.Errorf("%q in the plans:\n%s", bad, all)
		}
	}
}

// TestRunClaimFindsTasksByRun: grit run's claim, claim_run_tasks, finds
// its run's due tasks through tasks_run, not by walking the claim index
// past the store's other due tasks, 20,000 of them here, never analyzed.
func TestRunClaimFindsTasksByRun(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openIn(t, schema)
	ctx := bounded(t)
	enqueueN(t, s, 20000)
	r, err := s.SubmitRun(ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a", Kind: "k"}, {Name: "b", Kind: "k"}}})
	if err != nil {
		t.Fatal(err)
	}
	conn, plans := explainingConn(t, ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{schema}.Sanitize()+
		`.claim_run_tasks('w', 60000000, 1000, $1, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`, r.ID).Scan(&n)
	if err != nil || n != 2 {
		t.Fatalf("claimed %d of run %d's tasks (%v), want its 2", n, r.ID, err)
	}
	all := plans()
	if !strings.Contains(all, "Index Scan using tasks_run") {
		t.Errorf("no scan of tasks_run in the plans:\n%s", all)
	}
	for _, bad := range []string{"tasks_fair", "Seq Scan"} {
		if strings.Contains(all, bad) {
			t.Errorf("%q in the plans:\n%s", bad, all)
		}
	}
}
