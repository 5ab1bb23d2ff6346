package sqlite

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestPlansUseIndexes guards the hot statements against plans that scan or
// sort a whole backlog.
func TestPlansUseIndexes(t *testing.T) {
	t.Parallel()
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
	claimSQL, _ := dueSQL(store.ClaimRequest{Queues: []string{"q"}, Kinds: []string{"k"}, SkipGroups: []string{"g"}}, 0)
	runClaimSQL, _ := dueSQL(store.ClaimRequest{Run: 1}, 0)
	plans := []struct {
		name, sql string
		bad       []string
		want      []string
	}{
		{"claim", claimSQL, []string{"TEMP B-TREE"}, []string{"tasks_fair"}},
		// A run's claim reads its due tasks alone, not those it waits for.
		{"run claim", runClaimSQL, []string{"SCAN tasks"}, []string{"tasks_run_due (run_id=? AND next_at<?)"}},
		{"stamp", unstampedSQL, []string{"TEMP B-TREE", "SCAN tasks"}, []string{"tasks_unstamped (next_at<?)"}},
		{"lane", laneSQL, []string{"TEMP B-TREE", "SCAN tasks"}, nil},
		{"succeed", succeedSQL(4), []string{"SCAN tasks"}, nil},
		{"write attempts", writeAttemptsSQL(4), []string{"SCAN tasks", "SCAN t\n", "SCAN attempts"}, nil},
		{"finish", endTasksSQL(4), []string{"SCAN tasks"}, nil},
		{"attempts", attemptsSQL, []string{"SCAN tasks", "SCAN attempts"}, nil},
		{"success durations", successDurationsSQL, []string{"SCAN tasks", "SCAN attempts", "SCAN a\n"}, nil},
		{"promote", satisfySQL, []string{"SCAN tasks", "tasks_state"}, nil},
		{"block downstream", blockDownstreamSQL, []string{"SCAN tasks", "tasks_state"}, nil},
		{"renew", renewSQL, []string{"SCAN tasks", "tasks_lease_owner"}, nil},
	}
	for _, p := range plans {
		plan := explain(t, s, p.sql)
		for _, bad := range p.bad {
			if strings.Contains(plan, bad) {
				t.Errorf("%s: plan has %q:\n%s", p.name, bad, plan)
			}
		}
		for _, want := range p.want {
			if !strings.Contains(plan, want) {
				t.Errorf("%s: plan has no %q:\n%s", p.name, want, plan)
			}
		}
	}
}

// TestConsolePlansUseIndexes: the dashboard's reads find what they need
// through indexes: a page of dead letters, newest first, is a backward
// walk of tasks_state_id (no sort of every dead letter), the dead letter
// groups read it alone, and the attempt series probes tasks_success for
// the next kind, then the next name of a kind, one column at a time,
// reads each one's window, and reads attempts_ended.
func TestConsolePlansUseIndexes(t *testing.T) {
	t.Parallel()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	page := func(f task.Filter) string {
		where, _ := taskConds(f)
		return `SELECT id FROM tasks WHERE ` + strings.Join(where, " AND ") + ` ORDER BY id DESC LIMIT ?`
	}
	plans := []struct {
		name, sql string
		want      []string
		bad       []string
	}{
		{"a page of dead letters", page(task.Filter{States: []task.State{task.DeadLetter}, BeforeID: 9, Newest: true}),
			[]string{"tasks_state_id (state=? AND id<?)"}, []string{"TEMP B-TREE", "SCAN tasks\n"}},
		{"a page of dead letters of a fingerprint", page(task.Filter{States: []task.State{task.DeadLetter}, Fingerprint: "fp", Newest: true}),
			[]string{"tasks_state_id (state=?)"}, []string{"TEMP B-TREE", "SCAN tasks\n"}},
		{"dead letter groups", deadLetterGroupsSQL, []string{"tasks_state_id (state=?)"}, []string{"SCAN tasks\n"}},
		{"attempt series", seriesSQL, []string{"tasks_success (kind>?)", "tasks_success (kind=? AND name>?)",
			"USING COVERING INDEX tasks_success (kind=? AND name=? AND finished_at>?)",
			"USING INDEX attempts_ended (ended_at>?)"}, []string{"SCAN tasks\n", "SCAN attempts\n"}},
	}
	for _, p := range plans {
		plan := explain(t, s, p.sql)
		for _, want := range p.want {
			if !strings.Contains(plan, want) {
				t.Errorf("%s: plan has no %q:\n%s", p.name, want, plan)
			}
		}
		for _, bad := range p.bad {
			if strings.Contains(plan, bad) {
				t.Errorf("%s: plan has %q:\n%s", p.name, bad, plan)
			}
		}
	}
}

func explain(t *testing.T, s *Store, query string) string {
	t.Helper()
	args := make([]any, params(query))
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

// params counts the parameters of a query: each ? is one, and ?N (N a
// number) are as many as the largest N.
func params(query string) int {
	n, most := 0, 0
	for _, m := range regexp.MustCompile(`\?(\d*)`).FindAllStringSubmatch(query, -1) {
		if m[1] == "" {
			n++
		} else if i, _ := strconv.Atoi(m[1]); i > most {
			most = i
		}
	}
	return n + most
}
