package engine

import (
	"context"
	"time"
)

// Due times and lease expiries are on the store's clock (PostgreSQL's, for
// a fleet), which may differ from this machine's. The engine measures the
// difference (the skew) at start and at every heartbeat, and reads the
// store's time as its own clock plus the skew: a retry due in 5s is due 5s
// after now on the store's clock, and the claim loop sleeps until then on
// its own.

// measureSkew reads the store's clock and records how far it is from this
// machine's, taking the middle of the round trip as the moment it was read.
func (e *Engine) measureSkew(ctx context.Context) {
	before := time.Now()
	at, err := e.cfg.Store.Now(ctx)
	if err != nil {
		return
	}
	after := time.Now()
	mid := before.Add(after.Sub(before) / 2)
	e.skew.Store(int64(at.Sub(mid)))
}

// storeNow is the time on the store's clock.
func (e *Engine) storeNow() time.Time {
	return time.Now().Add(time.Duration(e.skew.Load()))
}

// untilStore is how long this machine waits until t on the store's clock.
func (e *Engine) untilStore(t time.Time) time.Duration {
	return time.Until(t.Add(-time.Duration(e.skew.Load())))
}
