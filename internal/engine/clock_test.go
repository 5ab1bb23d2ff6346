package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// TestLeaseExpiresOnTheEnginesClock: a worker that died holding a task
// (its lease of 15s left to run out) loses it when the clock passes the
// lease, and not before: the engine and the store share a fake clock,
// which the test moves a second at a time instead of sleeping.
func TestLeaseExpiresOnTheEnginesClock(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	st, err := sqlite.OpenConfig(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "grit.db"), Now: fc.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	id := enqueue(t, st, task.NewTask{Kind: "work"}).ID
	claimed, err := st.Claim(context.Background(), store.ClaimRequest{Worker: "dead", Limit: 1, Lease: 15 * time.Second})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim as the dead worker: %v, %v", claimed, err)
	}
	expires := claimed[0].LeaseExpires

	cfg := testConfig(st)
	cfg.Clock, cfg.Lease, cfg.Heartbeat, cfg.Poll = fc, 15*time.Second, 5*time.Second, time.Second
	done := make(chan struct{})
	start(t, cfg, Handler{Kind: "work", Fn: func(context.Context, *task.Task) error {
		close(done)
		return nil
	}})
	// Each look moves the clock a second on, so that the engine's tickers
	// (heartbeat, rescue) keep firing; the store's due times and leases
	// move with it.
	waitFor(t, 20*time.Second, func() bool {
		select {
		case <-done:
			return true
		default:
			fc.Advance(time.Second)
			return false
		}
	}, func() string { return "the dead worker's task to run here" })
	got := waitState(t, st, id, task.Success)
	as := attempts(t, st, id)
	if len(as) != 2 || as[0].Outcome != task.OutcomeInterrupted || got.Attempt != 2 {
		t.Fatalf("attempts %+v (task on attempt %d), want an interrupted one, then the success", as, got.Attempt)
	}
	if as[0].EndedAt.Before(expires) {
		t.Errorf("the dead worker's attempt was taken over at %v, before its lease expired at %v", as[0].EndedAt, expires)
	}
}

// clockedStore is a store that lends the engine its clock.
type clockedStore struct {
	store.Store
	fc *clock.Fake
}

func (s clockedStore) Clock() clock.Clock { return s.fc }

// TestEngineTakesTheStoresClock: an engine given no clock runs on the
// one its store lends (clock.Source), and one given a clock keeps it.
func TestEngineTakesTheStoresClock(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	st := clockedStore{Store: newStore(t), fc: fc}
	e, err := New(testConfig(st))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Settings().Clock; got != clock.Clock(fc) {
		t.Errorf("the engine runs on %T, not on the store's fake clock", got)
	}
	own := clock.NewFake(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg := testConfig(st)
	cfg.Clock = own
	if e, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	if got := e.Settings().Clock; got != clock.Clock(own) {
		t.Errorf("the engine given a clock runs on %T, not on it", got)
	}
}
