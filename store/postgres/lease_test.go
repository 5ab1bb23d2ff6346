package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
)

// TestHeartbeatHasItsOwnConnections: with every connection of the store's
// pool taken (by a worker's claims, results and per-task statements), a
// heartbeat still renews its leases at once, on a connection of its own.
func TestHeartbeatHasItsOwnConnections(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s, err := postgres.OpenConfig(bounded(t), postgres.Config{DSN: testDSN(), Schema: schema, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	enqueueN(t, s, 3)
	ts, err := s.Claim(bounded(t), store.ClaimRequest{Worker: "w", Limit: 3, Lease: time.Minute})
	if err != nil || len(ts) != 3 {
		t.Fatalf("claim: %d tasks (%v)", len(ts), err)
	}
	held := make([]store.Lease, len(ts))
	for i, tk := range ts {
		held[i] = store.Lease{TaskID: tk.ID, Token: tk.LeaseToken}
	}
	busy, err := s.Pool().Acquire(bounded(t)) // the pool's only connection
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Release()
	ctx, cancel := context.WithTimeout(bounded(t), 10*time.Second)
	defer cancel()
	lost, err := s.Heartbeat(ctx, "w", time.Minute, held)
	if err != nil || len(lost) != 0 {
		t.Errorf("heartbeat with the store's pool taken: lost %v (%v); want every lease renewed", lost, err)
	}
}
