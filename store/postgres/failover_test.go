package postgres_test

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
)

// TestLeaseTokensOutrankAFailover: claims the primary made that its
// standby never received (a claim commits without waiting) are fenced
// off on the promoted standby: its first claim's lease token outranks
// every token the old primary handed out, so a late heartbeat or result
// from a run of a lost claim is refused. The sequence of tokens only
// moves its logged position in steps of 32 values, so the primary here
// takes more than that after the standby stops receiving: without the
// fence, the promoted standby handed out the lost tokens again.
func TestLeaseTokensOutrankAFailover(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts PostgreSQL clusters of its own; runs without -short")
	}
	primary := pgtest.NewCluster(t)
	standby := primary.Standby(t, false)
	old, err := postgres.Open(bounded(t), primary.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	const lost = 40
	enqueueN(t, old, 1+lost)
	claim := func(s store.Store, n int) int64 {
		t.Helper()
		ts, err := s.Claim(bounded(t), store.ClaimRequest{Worker: "w", Limit: n, Lease: time.Minute})
		if err != nil || len(ts) != n {
			t.Fatalf("claim %d: %d tasks (%v)", n, len(ts), err)
		}
		var top int64
		for _, tk := range ts {
			top = max(top, tk.LeaseToken)
		}
		return top
	}
	claim(old, 1)
	standby.CatchUp(t, primary)
	release := standby.HoldWAL(t)
	before := claim(old, lost)
	primary.Kill(t)
	release()
	standby.Promote(t)

	promoted, err := postgres.Open(bounded(t), standby.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer promoted.Close()
	if after := claim(promoted, 1); after <= before {
		t.Errorf("the promoted standby's first claim took lease token %d, and the old primary had handed out up to %d in claims the standby never got: "+
			"a late result of such a claim's run would be taken", after, before)
	}
}
