package dash_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/grit-run/grit/internal/dash"
	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
)

// benchTasks is how many tasks BenchmarkPages fills its stores with:
// GRIT_DASH_BENCH_TASKS, 1,000,000 by default.
func benchTasks(b *testing.B) int {
	if s := os.Getenv("GRIT_DASH_BENCH_TASKS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 {
			b.Fatalf("GRIT_DASH_BENCH_TASKS=%q: want a number of tasks, 100 or more", s)
		}
		return n
	}
	return 1_000_000
}

// The mix of a store that has run for a while: 90% SUCCESS, 5% FAILED, 1%
// DEAD_LETTER (20 fingerprints), 2% READY, 1% RETRYING, 1% PENDING, over
// 10 kinds, 4 queues and 5 groups, one task every 10ms up to now; each
// success's attempt is on its task row, as a plain success leaves it, and
// the failures of the last hour have their attempts' rows.

const pgFill = `
INSERT INTO %[1]s.tasks (kind, queue, group_name, state, args, created_at, first_started_at, started_at, lease_owner,
	finished_at, next_at, attempt, last_error, fingerprint, streak)
SELECT 'kind-' || (i %% 10), 'q' || (i %% 4), CASE WHEN i %% 7 = 0 THEN 'g' || (i %% 5) ELSE '' END, st,
	convert_to('{"order":"o-' || i || '","cents":' || (i %% 9999) || '}', 'UTF8'),
	at, at, CASE WHEN st = 'SUCCESS' THEN at END, CASE WHEN st = 'SUCCESS' THEN 'w-1' ELSE '' END,
	CASE WHEN st IN ('SUCCESS', 'FAILED', 'DEAD_LETTER') THEN at + interval '1 second' END,
	CASE WHEN st IN ('READY', 'RETRYING') THEN at END,
	CASE WHEN st = 'PENDING' THEN 0 ELSE 1 END,
	CASE WHEN st IN ('FAILED', 'DEAD_LETTER', 'RETRYING') THEN 'KeyError: ' || (i %% 20) ELSE '' END,
	CASE WHEN st IN ('FAILED', 'DEAD_LETTER', 'RETRYING') THEN 'fp' || (i %% 20) ELSE '' END,
	CASE WHEN st = 'DEAD_LETTER' THEN 2 ELSE 0 END
FROM (SELECT i, now() - ($2 - i) * interval '10 milliseconds' AS at,
	CASE WHEN i %% 100 < 90 THEN 'SUCCESS' WHEN i %% 100 < 95 THEN 'FAILED' WHEN i %% 100 = 95 THEN 'DEAD_LETTER'
		WHEN i %% 100 < 98 THEN 'READY' WHEN i %% 100 = 98 THEN 'RETRYING' ELSE 'PENDING' END AS st
	FROM generate_series(1, $1) i) g;
INSERT INTO %[1]s.attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome, class, error, fingerprint)
SELECT id, id + 1000000000000, 1, 'w-1', finished_at - interval '1 second', finished_at, 'ERROR', 'unclassified', last_error, fingerprint
FROM %[1]s.tasks WHERE state IN ('FAILED', 'DEAD_LETTER') AND finished_at > now() - interval '1 hour';
ANALYZE %[1]s.tasks;
ANALYZE %[1]s.attempts;`

const sqliteFill = `
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?1),
g AS (SELECT i, ?3 - (?1 - i) * 10000 AS at,
	CASE WHEN i % 100 < 90 THEN 'SUCCESS' WHEN i % 100 < 95 THEN 'FAILED' WHEN i % 100 = 95 THEN 'DEAD_LETTER'
		WHEN i % 100 < 98 THEN 'READY' WHEN i % 100 = 98 THEN 'RETRYING' ELSE 'PENDING' END AS st FROM c)
INSERT INTO tasks (kind, queue, group_name, state, args, created_at, first_started_at, started_at, lease_owner, lease_token,
	finished_at, next_at, attempt, last_error, fingerprint, streak)
SELECT 'kind-' || (i % 10), 'q' || (i % 4), CASE WHEN i % 7 = 0 THEN 'g' || (i % 5) ELSE '' END, st,
	'{"order":"o-' || i || '","cents":' || (i % 9999) || '}', at, at,
	CASE WHEN st = 'SUCCESS' THEN at END, CASE WHEN st = 'SUCCESS' THEN 'w-1' ELSE '' END, CASE WHEN st = 'PENDING' THEN 0 ELSE i END,
	CASE WHEN st IN ('SUCCESS', 'FAILED', 'DEAD_LETTER') THEN at + 1000000 END,
	CASE WHEN st IN ('READY', 'RETRYING') THEN at END,
	CASE WHEN st = 'PENDING' THEN 0 ELSE 1 END,
	CASE WHEN st IN ('FAILED', 'DEAD_LETTER', 'RETRYING') THEN 'KeyError: ' || (i % 20) ELSE '' END,
	CASE WHEN st IN ('FAILED', 'DEAD_LETTER', 'RETRYING') THEN 'fp' || (i % 20) ELSE '' END,
	CASE WHEN st = 'DEAD_LETTER' THEN 2 ELSE 0 END
FROM g;
INSERT INTO attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome, class, error, fingerprint)
SELECT id, lease_token, 1, 'w-1', finished_at - 1000000, finished_at, 'ERROR', 'unclassified', last_error, fingerprint
FROM tasks WHERE state IN ('FAILED', 'DEAD_LETTER') AND finished_at > ?3 - 3600000000;
ANALYZE;`

// BenchmarkPages measures each dashboard page, server-side, on a store of
// benchTasks tasks, on SQLite and PostgreSQL, and reports its p50 and p95
// in milliseconds (docs/bench.md has the figures). Run it with
// -benchtime 40x: the fill takes a while, the pages should not.
func BenchmarkPages(b *testing.B) {
	n := benchTasks(b)
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			st := filledStore(b, kind, n)
			declareBenchSchedules(b, st)
			d, err := dash.New(dash.Config{Store: st})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			for _, page := range []struct{ name, path string }{
				{"overview", "/"},
				{"tasks", "/tasks"},
				{"tasks-failed", "/tasks?state=FAILED"},
				{"tasks-dead-letters-of-a-fingerprint", "/tasks?state=DEAD_LETTER&fingerprint=fp7"},
				{"tasks-page-deep", "/tasks?before=" + strconv.Itoa(n/2)},
				{"tasks-text", "/tasks?state=FAILED&q=o-4242"},
				{"tasks-text-alone", "/tasks?q=o-4242"},
				{"task", "/tasks/" + strconv.Itoa(n/3)},
				{"dead-letters", "/dead-letters"},
				{"runs", "/runs"},
				{"groups", "/groups"},
				{"workers", "/workers"},
				{"schedules", "/schedules"},
			} {
				b.Run(page.name, func(b *testing.B) {
					var took []time.Duration
					for b.Loop() {
						req := httptest.NewRequest("GET", page.path, nil)
						rec := httptest.NewRecorder()
						start := time.Now()
						d.ServeHTTP(rec, req)
						took = append(took, time.Since(start))
						if rec.Code != http.StatusOK {
							b.Fatalf("GET %s: %d\n%s", page.path, rec.Code, rec.Body)
						}
					}
					slices.Sort(took)
					b.ReportMetric(ms(took[len(took)/2]), "p50-ms")
					b.ReportMetric(ms(took[min(len(took)-1, len(took)*95/100)]), "p95-ms")
					b.ReportMetric(ms(took[len(took)-1]), "max-ms") // the overview's first look waits for its counts
				})
			}
		})
	}
}

// declareBenchSchedules declares 50 schedules of every minute, five
// minutes ago, and ticks them: each has five tasks not ended, which the
// schedules page reads one by one.
func declareBenchSchedules(b *testing.B, st store.Store) {
	b.Helper()
	ctx := context.Background()
	now, err := st.Now(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var ss []schedule.Schedule
	for i := range 50 {
		ss = append(ss, schedule.Schedule{Name: fmt.Sprintf("bench-%02d", i), Every: time.Minute, Task: schedule.Task{Kind: "bench-schedule"}})
	}
	if err := sched.Declare(ctx, st, now.Add(-5*time.Minute), ss...); err != nil {
		b.Fatal(err)
	}
	if err := (&sched.Ticker{Store: st}).Tick(ctx, now); err != nil {
		b.Fatal(err)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func filledStore(b *testing.B, kind string, n int) store.Store {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	defer func() { b.Logf("%s: %d tasks filled in %v", kind, n, time.Since(start).Round(time.Millisecond)) }()
	if kind == "postgres" {
		schema := pgtest.NewSchema(b)
		st := pgtest.OpenIn(b, schema)
		admin := pgtest.Admin(b)
		for i, stmt := range strings.Split(fmt.Sprintf(pgFill, schema), ";\n") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			var args []any
			if i == 0 {
				args = []any{n, n}
			}
			if _, err := admin.Exec(ctx, stmt, args...); err != nil {
				b.Fatalf("%v\n%s", err, stmt)
			}
		}
		return st
	}
	path := filepath.Join(b.TempDir(), "grit.db")
	st, err := sqlite.Open(ctx, "sqlite:"+path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, sqliteFill, n, 0, time.Now().UnixMicro()); err != nil {
		b.Fatal(err)
	}
	return st
}
