package postgres_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestMigrationMovesOpenAttemptsToTheTaskRow: an attempt opened before
// migration 0003 (a RUNNING attempts row, no started_at on the task) is,
// after the migration's data step, the task's open attempt, and its finish
// writes one row with the original start.
func TestMigrationMovesOpenAttemptsToTheTaskRow(t *testing.T) {
	t.Parallel()
	s, ctx := openTest(t), bounded(t)
	enqueueN(t, s, 1)
	got, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 1, Lease: time.Minute})
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: %v %v", got, err)
	}
	c := got[0]
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	db, schema := admin(t), s.Schema()
	// The state the old scheme left: the attempt's row open, the task row without it.
	if _, err := db.Exec(ctx, `UPDATE `+schema+`.tasks SET started_at = NULL WHERE id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO `+schema+`.attempts (task_id, lease_token, number, worker, started_at, outcome)
		VALUES ($1, $2, 1, 'w', $3, 'RUNNING')`, c.ID, c.LeaseToken, started); err != nil {
		t.Fatal(err)
	}
	sql, err := os.ReadFile("migrations/0003_attempt_written_once.sql")
	if err != nil {
		t.Fatal(err)
	}
	_, data, ok := strings.Cut(string(sql), "ADD COLUMN started_at timestamptz;")
	if !ok {
		t.Fatal("migration 0003 no longer adds started_at as this test expects")
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+schema); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, data); err != nil {
		t.Fatalf("data step: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	as, err := s.Attempts(ctx, c.ID)
	if err != nil || len(as) != 1 || as[0].Outcome != task.OutcomeRunning || !as[0].StartedAt.Equal(started) {
		t.Fatalf("attempts after the migration: %+v (%v), want the one open attempt started at %v", as, err, started)
	}
	if errs, err := s.Finish(ctx, []store.Finish{{TaskID: c.ID, Token: c.LeaseToken, State: task.Success}}); err != nil || errs[0] != nil {
		t.Fatalf("finish: %v %v", err, errs)
	}
	as, err = s.Attempts(ctx, c.ID)
	if err != nil || len(as) != 1 || as[0].Outcome != task.OutcomeSuccess || !as[0].StartedAt.Equal(started) || as[0].Worker != "w" {
		t.Fatalf("attempts after the finish: %+v (%v), want one SUCCESS started at %v", as, err, started)
	}
}
