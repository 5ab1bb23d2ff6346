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

// TestSuccessDurationsFindsSuccessesByIndex: SuccessDurations, which a
// worker calls when a task keeps timing out, reaches the successes of one
// kind through tasks_success and each one's attempt row by primary key,
// among 20,000 tasks, for a rare kind (3 successes) and a common one
// (2,000, of which it reads 200), before and after the table is analyzed:
// it never scans the tasks.
func TestSuccessDurationsFindsSuccessesByIndex(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openIn(t, schema)
	ctx := bounded(t)
	enqueueN(t, s, 20000)
	succeed(t, ctx, s, store.ClaimRequest{Worker: "w", Limit: 1000, Lease: time.Minute}, 2)
	if _, err := s.Enqueue(ctx, []task.NewTask{{Kind: "slow"}, {Kind: "slow"}, {Kind: "slow"}}); err != nil {
		t.Fatal(err)
	}
	succeed(t, ctx, s, store.ClaimRequest{Worker: "w", Kinds: []string{"slow"}, Limit: 3, Lease: time.Minute}, 1)

	conn, plans := explainingConn(t, ctx)
	q := strings.ReplaceAll(postgres.SuccessDurationsSQL, "$S.", pgx.Identifier{schema}.Sanitize()+".")
	for _, when := range []string{"never analyzed", "analyzed"} {
		if when == "analyzed" {
			if _, err := admin(t).Exec(ctx, `ANALYZE `+pgx.Identifier{schema, "tasks"}.Sanitize()); err != nil {
				t.Fatal(err)
			}
		}
		plans()
		for kind, want := range map[string]int{"slow": 3, "k": 200} {
			rows, err := conn.Query(ctx, q, kind, "", 200)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil || len(got) != want {
				t.Fatalf("%s: %d durations of kind %s (%v), want %d", when, len(got), kind, err, want)
			}
		}
		all := plans()
		for _, want := range []string{"using tasks_success", "using attempts_pkey"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: no %q in the plan:\n%s", when, want, all)
			}
		}
		if strings.Contains(all, "Seq Scan") {
			t.Errorf("%s: a sequential scan in the plan:\n%s", when, all)
		}
	}
}

// succeed claims with req and finishes what it claims as successes, one
// in three with output (so that its attempt gets a row of its own),
// rounds times.
func succeed(t *testing.T, ctx context.Context, s *postgres.Store, req store.ClaimRequest, rounds int) {
	t.Helper()
	for range rounds {
		ts, err := s.Claim(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		fs := make([]store.Finish, len(ts))
		for i, c := range ts {
			fs[i] = store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: task.Success}
			if i%3 == 0 {
				fs[i].Attempt.Output = "done"
			}
		}
		if _, err := s.Finish(ctx, fs); err != nil {
			t.Fatal(err)
		}
	}
}
