package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
	"github.com/jackc/pgx/v5"
)

// claimPath is one way a claim is called: the plain claim, a breaker's
// probe (only_group), one tenant's (only_tenant), one past skipped groups,
// and a run's own (claim_run_tasks, $1 the run).
type claimPath struct{ name, sql string }

func claimPaths(sch string) []claimPath {
	const lease = `'w', 60000000, 100, `
	return []claimPath{
		{"claim", `SELECT * FROM ` + sch + `.claim_tasks(` + lease + `NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1000)`},
		{"probe", `SELECT * FROM ` + sch + `.claim_tasks(` + lease + `NULL, NULL, NULL, 'g', NULL, NULL, NULL, 1000)`},
		{"tenant", `SELECT * FROM ` + sch + `.claim_tasks(` + lease + `NULL, NULL, NULL, NULL, NULL, NULL, 't', 1000)`},
		{"skips", `SELECT * FROM ` + sch + `.claim_tasks(` + lease + `'{q}', '{k}', '{g}', NULL, '{s}', '{u}', NULL, 1000)`},
		{"run", `SELECT * FROM ` + sch + `.claim_run_tasks(` + lease + `$1, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`},
	}
}

// claimCost runs a claim under EXPLAIN (ANALYZE, BUFFERS) and returns the
// shared buffers it touched, nested statements included, and its time;
// run is its $1, if it has one.
func claimCost(t testing.TB, ctx context.Context, conn *pgx.Conn, q string, run int64) (buffers int64, ms float64) {
	t.Helper()
	var args []any
	if strings.Contains(q, "$1") {
		args = append(args, run)
	}
	var out []byte
	if err := conn.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+q, args...).Scan(&out); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var plans []struct {
		Plan struct {
			Hit  int64 `json:"Shared Hit Blocks"`
			Read int64 `json:"Shared Read Blocks"`
		}
		Time float64 `json:"Execution Time"`
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain %s: %v: %s", q, err, out)
	}
	return plans[0].Plan.Hit + plans[0].Plan.Read, plans[0].Time
}

// plainConn connects as the store's connections do.
func plainConn(t testing.TB, ctx context.Context) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(testDSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["plan_cache_mode"] = "force_custom_plan" // as the store's connections
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.WithoutCancel(ctx)) })
	return conn
}

// fillNotDue enqueues n tasks due in an hour, in run (0: none), and moves
// those of them whose id is odd to RETRYING, as a retry waiting out its
// backoff is; none of them has a stamp.
func fillNotDue(t testing.TB, ctx context.Context, s store.Store, conn *pgx.Conn, sch string, n int, run int64) {
	t.Helper()
	at := time.Now().Add(time.Hour)
	for done := 0; done < n; done += 5000 {
		ts := make([]task.NewTask, min(5000, n-done))
		for i := range ts {
			ts[i] = task.NewTask{Kind: "k", RunAt: at}
		}
		if _, err := s.Enqueue(ctx, ts); err != nil {
			t.Fatal(err)
		}
	}
	_, err := conn.Exec(ctx, `UPDATE `+sch+`.tasks SET state = CASE WHEN id % 2 = 1 THEN 'RETRYING' ELSE state END,
		run_id = nullif($1, 0) WHERE next_at > now() AND state = 'READY'`, run)
	if err != nil {
		t.Fatal(err)
	}
}

// TestClaimCostsNothingNotDue: tasks not yet due, scheduled or waiting out
// a retry's backoff, 100,000 of them, are outside every claim's walk: the
// plain claim with its stamping, a breaker's probe, one tenant's, one with
// skip lists, and a run's own claim, whose run holds them all, each
// touch about the buffers they touch with none waiting (an index a level
// deeper costs a buffer a descent). Walking them cost thousands.
func TestClaimCostsNothingNotDue(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openIn(t, schema)
	ctx := bounded(t)
	conn := plainConn(t, ctx)
	sch := pgx.Identifier{schema}.Sanitize()
	r, err := s.SubmitRun(ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a", Kind: "k"}}})
	if err != nil {
		t.Fatal(err)
	}
	paths := claimPaths(sch)
	before := map[string]int64{}
	for _, p := range paths {
		claimCost(t, ctx, conn, p.sql, r.ID) // plans made, the run's task claimed
		before[p.name], _ = claimCost(t, ctx, conn, p.sql, r.ID)
	}
	fillNotDue(t, ctx, s, conn, sch, 100_000, r.ID)
	const slack = 10
	for _, p := range paths {
		claimCost(t, ctx, conn, p.sql, r.ID)
		after, _ := claimCost(t, ctx, conn, p.sql, r.ID)
		if after > before[p.name]+slack {
			t.Errorf("%s: %d buffers with 100,000 tasks not due, %d with none", p.name, after, before[p.name])
		}
	}
}

// notDue is how many tasks not yet due BenchmarkClaimBehindNotDue
// enqueues: GRIT_BENCH_NOT_DUE, default 100,000.
func notDue(b *testing.B) int {
	v := os.Getenv("GRIT_BENCH_NOT_DUE")
	if v == "" {
		return 100_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("GRIT_BENCH_NOT_DUE=%q: want a count of tasks, e.g. 1000000", v)
	}
	return n
}

// BenchmarkClaimBehindNotDue enqueues a task, claims it and records its
// success, with none waiting and with notDue tasks due in an hour (half
// of them RETRYING). It reports the buffers and time of each claim path
// with nothing due, by EXPLAIN (ANALYZE, BUFFERS), averaged over 20 calls.
func BenchmarkClaimBehindNotDue(b *testing.B) {
	for _, waiting := range []int{0, notDue(b)} {
		b.Run(fmt.Sprintf("waiting=%d", waiting), func(b *testing.B) {
			schema := newSchema(b)
			s := openIn(b, schema)
			ctx := context.Background()
			conn := plainConn(b, ctx)
			sch := pgx.Identifier{schema}.Sanitize()
			r, err := s.SubmitRun(ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a", Kind: "k"}}})
			if err != nil {
				b.Fatal(err)
			}
			fillNotDue(b, ctx, s, conn, sch, waiting, r.ID)
			if _, err := conn.Exec(ctx, `VACUUM ANALYZE `+sch+`.tasks`); err != nil {
				b.Fatal(err)
			}
			metrics := map[string]float64{}
			for _, p := range claimPaths(sch) {
				var bufs int64
				var ms float64
				claimCost(b, ctx, conn, p.sql, r.ID)
				for range 20 {
					n, t := claimCost(b, ctx, conn, p.sql, r.ID)
					bufs, ms = bufs+n, ms+t
				}
				metrics[p.name+"-buffers"], metrics[p.name+"-ms"] = float64(bufs)/20, ms/20
			}
			for b.Loop() {
				if _, err := s.Enqueue(ctx, []task.NewTask{{Kind: "k"}}); err != nil {
					b.Fatal(err)
				}
				if claimFinish(b, s, "w") != 1 {
					b.Fatal("claimed other than the one task due")
				}
			}
			for unit, v := range metrics { // after the loop, which resets them
				b.ReportMetric(v, unit)
			}
		})
	}
}
