package postgres_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestHotPlansStayLookups checks the plans of claim_tasks and
// succeed_alone, which a connection makes once, at its first call of each.
// Made while the tasks table is empty, they must still be the claim index's
// walk and primary key lookups once it holds thousands of tasks that were
// never analyzed: no sequential scan, no hash or merge join. The plans are
// read with auto_explain, which sends each as a notice.
func TestHotPlansStayLookups(t *testing.T) {
	schema := newSchema(t)
	s := openIn(t, schema)
	ctx := bounded(t)

	var mu sync.Mutex
	var plans []string
	cfg, err := pgx.ParseConfig(testDSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["plan_cache_mode"] = "force_custom_plan" // as the store's connections
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		plans = append(plans, n.Message)
		mu.Unlock()
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
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
	sch := pgx.Identifier{schema}.Sanitize()
	claimAndSucceed := func(want int) {
		t.Helper()
		ids, tokens := []int64{}, []int64{}
		rows, err := conn.Query(ctx, `SELECT id, lease_token FROM `+sch+`.claim_tasks('w', 60000000, 5, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
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
	mu.Lock()
	plans = nil
	mu.Unlock()
	claimAndSucceed(5)

	mu.Lock()
	all := strings.Join(plans, "\n")
	mu.Unlock()
	for _, want := range []string{"Index Scan using tasks_claim", "Index Scan using tasks_pkey"} {
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
