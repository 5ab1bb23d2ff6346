package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// fillConsole inserts n finished tasks as a busy store holds them, in
// one statement (the store's own calls would take minutes for a
// million): of every hundred, 96 plain successes of ten kinds, 2 dead
// letters and 1 failure (each with its attempt row, of seven
// fingerprints) and one task waiting, ended over the last two days.
// Every twentieth success was retried once first: its failed attempt has
// a row.
func fillConsole(t testing.TB, ctx context.Context, schema string, n int) {
	t.Helper()
	tasks, attempts := pgx.Identifier{schema, "tasks"}.Sanitize(), pgx.Identifier{schema, "attempts"}.Sanitize()
	for i, q := range []string{
		`INSERT INTO ` + tasks + ` (kind, queue, state, attempt, lease_token, started_at, finished_at, next_at,
			fingerprint, last_error, args)
		SELECT 'k' || (i % 10), 'default', s, 1, i,
			CASE s WHEN 'SUCCESS' THEN at - interval '1 second' END,
			CASE WHEN s <> 'READY' THEN at END,
			CASE s WHEN 'READY' THEN now() - interval '1 minute' END,
			CASE WHEN s IN ('DEAD_LETTER', 'FAILED') THEN 'fp' || (i % 7) ELSE '' END,
			CASE WHEN s IN ('DEAD_LETTER', 'FAILED') THEN 'boom ' || i ELSE '' END,
			convert_to('{"n":' || i || '}', 'UTF8')
		FROM generate_series(1, $1::int) i,
			LATERAL (SELECT CASE WHEN i % 100 IN (0, 1) THEN 'DEAD_LETTER' WHEN i % 100 = 2 THEN 'FAILED'
				WHEN i % 100 = 3 THEN 'READY' ELSE 'SUCCESS' END AS s,
				now() - (i % 2880) * interval '1 minute' AS at) x`,
		`INSERT INTO ` + attempts + ` (task_id, lease_token, number, worker, started_at, ended_at, outcome, error, fingerprint)
		SELECT id, lease_token, 1, 'w', finished_at - interval '1 second', finished_at, 'ERROR', last_error, fingerprint
		FROM ` + tasks + ` WHERE state IN ('DEAD_LETTER', 'FAILED')
		UNION ALL
		SELECT id, lease_token - 1, 1, 'w', finished_at - interval '2 minutes', finished_at - interval '1 minute', 'ERROR', 'blip', 'fpb'
		FROM ` + tasks + ` WHERE state = 'SUCCESS' AND id % 20 = 0`,
	} {
		args := []any{n}
		if i > 0 {
			args = nil
		}
		if _, err := admin(t).Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConsoleReadsUseIndexes: the dashboard's reads find what they need
// through indexes among 50,000 tasks: the dead letters through
// tasks_state_id, the attempt series through tasks_success (a probe per
// kind and name, never a join by hash that would read every success) and
// attempts_ended, a page of dead letters, newest first, by a backward walk
// of tasks_state_id that stops at the page's size. None scans the tasks or sorts them. Unlike the hot
// statements' plans (plans_test.go), made once per connection while the
// table may be empty, these are made at each call (custom plans) from the
// statistics autovacuum keeps: they are checked once the tables are
// analyzed.
func TestConsoleReadsUseIndexes(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openIn(t, schema)
	ctx := bounded(t)
	fillConsole(t, ctx, schema, 50000)
	conn, plans := explainingConn(t, ctx)
	sch := func(q string) string { return strings.ReplaceAll(q, "$S.", pgx.Identifier{schema}.Sanitize()+".") }
	// run runs q on the explaining connection and returns the sum of its
	// rows' column col, or their number when col is -1.
	run := func(q string, col int, args ...any) int {
		t.Helper()
		rows, err := conn.Query(ctx, sch(q), args...)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			vs, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			if col < 0 {
				n++
			} else {
				n += int(vs[col].(int64))
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// count counts on another connection, whatever its plan.
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := admin(t).QueryRow(ctx, sch(q), args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	page, pageArgs := postgres.ListTasksSQL(task.Filter{States: []task.State{task.DeadLetter}, Newest: true, BeforeID: 40000, Limit: 50})
	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	since := now.Add(-time.Hour)
	checks := []struct {
		name string
		rows func() int
		want int
		uses []string
		bad  []string
	}{
		{"dead letter groups", func() int { return run(postgres.DeadLetterGroupsSQL, 1) },
			count(`SELECT count(*) FROM $S.tasks WHERE state = 'DEAD_LETTER'`),
			[]string{"tasks_state_id", "using tasks_pkey"}, []string{"Seq Scan"}},
		{"attempt series", func() int { return run(postgres.SeriesSQL, 2, since, time.Minute.Microseconds()) },
			count(`SELECT (SELECT count(*) FROM $S.tasks WHERE state = 'SUCCESS' AND finished_at >= $1) +
				(SELECT count(*) FROM $S.attempts WHERE outcome = 'ERROR' AND ended_at >= $1)`, since),
			[]string{"using tasks_success", "attempts_ended"}, []string{"Seq Scan", "Hash Join"}},
		{"a page of dead letters", func() int { return run(page, -1, pageArgs...) }, 50,
			[]string{"Index Scan Backward using tasks_state_id"}, []string{"Seq Scan", "Sort"}},
	}
	if _, err := admin(t).Exec(ctx, `ANALYZE `+pgx.Identifier{schema, "tasks"}.Sanitize()+`, `+
		pgx.Identifier{schema, "attempts"}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		plans()
		if n := c.rows(); n != c.want {
			t.Errorf("%s: %d, want %d", c.name, n, c.want)
		}
		all := plans()
		for _, want := range c.uses {
			if !strings.Contains(all, want) {
				t.Errorf("%s: no %q in the plan:\n%s", c.name, want, all)
			}
		}
		for _, bad := range c.bad {
			if strings.Contains(all, bad) {
				t.Errorf("%s: %q in the plan:\n%s", c.name, bad, all)
			}
		}
	}
}

// BenchmarkConsoleMillion times the dashboard's reads on a store of a
// million tasks (fillConsole's mix, vacuumed and analyzed as autovacuum
// keeps it). Filling it takes a minute or so.
func BenchmarkConsoleMillion(b *testing.B) {
	schema := newSchema(b)
	s := openIn(b, schema)
	ctx := context.Background()
	fillConsole(b, ctx, schema, 1000000)
	for _, table := range []string{"tasks", "attempts"} {
		if _, err := admin(b).Exec(ctx, `VACUUM ANALYZE `+pgx.Identifier{schema, table}.Sanitize()); err != nil {
			b.Fatal(err)
		}
	}
	now, err := s.Now(ctx)
	if err != nil {
		b.Fatal(err)
	}
	dead := []task.State{task.DeadLetter}
	reads := []struct {
		name string
		read func() error
	}{
		{"DeadLetterGroups", func() error { _, err := s.DeadLetterGroups(ctx); return err }},
		{"AttemptSeries/hour", func() error { _, err := s.AttemptSeries(ctx, now.Add(-time.Hour), time.Minute); return err }},
		{"AttemptSeries/day", func() error { _, err := s.AttemptSeries(ctx, now.Add(-24*time.Hour), 15*time.Minute); return err }},
		{"OldestDue", func() error { _, err := s.OldestDue(ctx, []string{"default"}); return err }},
		{"ListTasks/newest", func() error {
			_, err := s.ListTasks(ctx, task.Filter{Newest: true, Limit: 50})
			return err
		}},
		{"ListTasks/dead-letters-page", func() error {
			_, err := s.ListTasks(ctx, task.Filter{States: dead, Newest: true, BeforeID: 500000, Limit: 50})
			return err
		}},
		{"ListTasks/dead-letters-of-a-fingerprint", func() error {
			_, err := s.ListTasks(ctx, task.Filter{States: dead, Fingerprint: "fp3", Newest: true, Limit: 50})
			return err
		}},
		{"ListTasks/text", func() error {
			_, err := s.ListTasks(ctx, task.Filter{States: dead, Text: "boom 9999", Newest: true, Limit: 50})
			return err
		}},
		// Unindexed: a text sought in every state, a kind in none, walk
		// every task (the dashboard bounds them with a state or a time).
		{"ListTasks/text-in-every-state", func() error {
			_, err := s.ListTasks(ctx, task.Filter{Text: "boom 9999", Newest: true, Limit: 50})
			return err
		}},
		{"ListTasks/kind-of-none", func() error {
			_, err := s.ListTasks(ctx, task.Filter{Kind: "nosuch", Newest: true, Limit: 50})
			return err
		}},
		{"ListRuns", func() error { _, err := s.ListRuns(ctx, task.RunFilter{Limit: 50}); return err }},
	}
	for _, r := range reads {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				if err := r.read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAuditIsAppendOnly: the audit table refuses to change or lose an
// entry, whoever asks: an entry read is an entry written.
func TestAuditIsAppendOnly(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openIn(t, schema)
	ctx := bounded(t)
	e, err := s.Audit(ctx, store.AuditEntry{Who: "local", Action: "replay", Target: "task 1", Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	audit := pgx.Identifier{schema, "audit"}.Sanitize()
	for _, q := range []string{`UPDATE ` + audit + ` SET who = 'someone else' WHERE id = $1`, `DELETE FROM ` + audit + ` WHERE id = $1`} {
		if _, err := admin(t).Exec(ctx, q, e.ID); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: error %v, want the log's refusal", q, err)
		}
	}
	if es, err := s.AuditLog(ctx, 0, 0); err != nil || len(es) != 1 || es[0] != e {
		t.Errorf("log %+v (%v), want only %+v, unchanged", es, err, e)
	}
}
