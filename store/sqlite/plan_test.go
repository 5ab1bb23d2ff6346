package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
)

// TestPlansUseIndexes guards the hot statements against plans that scan or
// sort a whole backlog.
func TestPlansUseIndexes(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	_, err = s.w.conn.ExecContext(ctx, `WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
		INSERT INTO tasks (kind, queue, state, next_at, created_at, priority)
		SELECT 'k', 'q', CASE i % 2 WHEN 0 THEN 'READY' ELSE 'PENDING' END, i, i, i % 3 FROM n`)
	if err != nil {
		t.Fatal(err)
	}
	claimWhere, _ := dueWhere(store.ClaimRequest{Queues: []string{"q"}, Kinds: []string{"k"}, SkipGroups: []string{"g"}})
	plans := []struct {
		name, sql string
		bad       []string
	}{
		{"claim", `SELECT id FROM tasks INDEXED BY tasks_claim WHERE ` + claimWhere +
			` ORDER BY priority DESC, next_at, id LIMIT ?`, []string{"TEMP B-TREE"}},
		{"finish", finishTasksSQL(4), []string{"SCAN tasks"}},
		{"close attempts", closeAttemptsSQL(4), []string{"SCAN attempts"}},
		{"promote", satisfySQL, []string{"SCAN tasks", "tasks_state"}},
		{"block downstream", blockDownstreamSQL, []string{"SCAN tasks", "tasks_state"}},
		{"renew", renewSQL, []string{"SCAN tasks", "tasks_lease_owner"}},
	}
	for _, p := range plans {
		plan := explain(t, s, p.sql)
		for _, bad := range p.bad {
			if strings.Contains(plan, bad) {
				t.Errorf("%s: plan has %q:\n%s", p.name, bad, plan)
			}
		}
	}
}

func explain(t *testing.T, s *Store, query string) string {
	t.Helper()
	args := make([]any, strings.Count(query, "?"))
	rows, err := s.w.conn.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	return b.String()
}
