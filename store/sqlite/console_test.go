package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/grit-run/grit/task"
)

// BenchmarkConsoleMillion times the dashboard's reads on a store of a
// million tasks, inserted in one statement as a busy store holds them:
// of every hundred, 96 plain successes of ten kinds (each attempt on its
// task row), 2 dead letters and 1 failure (each with its attempt's row, of
// seven fingerprints) and one task waiting, ended over the last two days;
// every twentieth success was retried once first. Filling it takes a
// minute or so.
func BenchmarkConsoleMillion(b *testing.B) {
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), "grit.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	now, _ := s.Now(ctx)
	for _, q := range []string{
		`WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000),
			x (i, s, at) AS (SELECT i, CASE WHEN i % 100 IN (0, 1) THEN 'DEAD_LETTER' WHEN i % 100 = 2 THEN 'FAILED'
				WHEN i % 100 = 3 THEN 'READY' ELSE 'SUCCESS' END, ?1 - (i % 2880) * 60000000 FROM n)
		INSERT INTO tasks (id, kind, queue, state, attempt, lease_token, lease_owner, started_at, finished_at, next_at, fingerprint, last_error, args, created_at)
		SELECT i, 'k' || (i % 10), 'default', s, CASE WHEN s = 'SUCCESS' AND i % 20 = 0 THEN 2 ELSE 1 END, i,
			CASE s WHEN 'SUCCESS' THEN 'w' ELSE '' END, CASE s WHEN 'SUCCESS' THEN at - 1000000 END,
			CASE WHEN s <> 'READY' THEN at END, CASE s WHEN 'READY' THEN ?1 - 60000000 END,
			CASE WHEN s IN ('DEAD_LETTER', 'FAILED') THEN 'fp' || (i % 7) ELSE '' END,
			CASE WHEN s IN ('DEAD_LETTER', 'FAILED') THEN 'boom ' || i ELSE '' END,
			CAST('{"n":' || i || '}' AS BLOB), at - 1000000
		FROM x`,
		`INSERT INTO attempts (task_id, lease_token, number, worker, started_at, ended_at, outcome, error, fingerprint)
		SELECT id, lease_token, 1, 'w', finished_at - 1000000, finished_at, 'ERROR', last_error, fingerprint
		FROM tasks WHERE state IN ('DEAD_LETTER', 'FAILED')
		UNION ALL
		SELECT id, lease_token - 1, 1, 'w', finished_at - 120000000, finished_at - 60000000, 'ERROR', 'blip', 'fpb'
		FROM tasks WHERE state = 'SUCCESS' AND id % 20 = 0`,
		`ANALYZE`,
	} {
		if _, err := s.w.conn.ExecContext(ctx, q, now.UnixMicro()); err != nil {
			b.Fatal(err)
		}
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
