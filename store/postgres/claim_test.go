package postgres_test

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// TestClaimLostInACrashIsFenced: a claim commits without waiting for the
// disk, so a crash can lose it and bring its task back as it was before.
// The next claim's token must still be larger than the lost one, so that
// the first run's results are rejected, even with the token sequence's
// advance lost too; and the claim's relaxed commit must
// not outlive its transaction on the pooled connection.
func TestClaimLostInACrashIsFenced(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s, err := postgres.OpenConfig(bounded(t), postgres.Config{DSN: testDSN(), Schema: schema, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := bounded(t)
	enqueueN(t, s, 1)
	before, err := s.ListTasks(ctx, task.Filter{})
	if err != nil || len(before) != 1 {
		t.Fatalf("tasks %v (%v)", before, err)
	}
	lost, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 1, Lease: time.Minute})
	if err != nil || len(lost) != 1 {
		t.Fatalf("claim: %v %v", lost, err)
	}
	var sync string
	if err := s.Pool().QueryRow(ctx, "SHOW synchronous_commit").Scan(&sync); err != nil || sync != "on" {
		t.Errorf("synchronous_commit after a claim is %q (%v), want on: the claim's setting leaked", sync, err)
	}
	// What recovery from a crash that lost the claim leaves: the task as it
	// was, and the token sequence back before the lost token, at worst
	// anywhere before the restart (here, before the server's start).
	if _, err := admin(t).Exec(ctx, `UPDATE `+schema+`.tasks SET state = 'READY', lease_token = $2, lease_owner = '',
		lease_expires = NULL, attempt = 0, started_at = NULL, next_at = now() WHERE id = $1`, lost[0].ID, before[0].LeaseToken); err != nil {
		t.Fatal(err)
	}
	if _, err := admin(t).Exec(ctx, `SELECT setval($1::regclass, 1)`, schema+`.lease_tokens`); err != nil {
		t.Fatal(err)
	}
	again, err := s.Claim(ctx, store.ClaimRequest{Worker: "w2", Limit: 1, Lease: time.Minute})
	if err != nil || len(again) != 1 {
		t.Fatalf("claim again: %v %v", again, err)
	}
	if again[0].LeaseToken <= lost[0].LeaseToken {
		t.Fatalf("the claim after the crash has token %d, not more than the lost claim's %d: the lost run's results would be taken",
			again[0].LeaseToken, lost[0].LeaseToken)
	}
	errs, err := s.Finish(ctx, []store.Finish{{TaskID: lost[0].ID, Token: lost[0].LeaseToken, State: "SUCCESS"}})
	if err != nil || errs[0] == nil {
		t.Errorf("the lost run's result was taken (%v, %v)", err, errs)
	}
}
