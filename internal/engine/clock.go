package engine

import (
	"time"
)

// Due times and lease expiries are on the store's clock (PostgreSQL's, for
// a fleet), which may differ from this machine's. The gate measures the
// difference (the skew) at start and at every heartbeat, and reads the
// store's time as the engine's clock plus the skew: a retry due in 5s is
// due 5s after now on the store's clock, and the claim loop sleeps until
// then on its own.

// storeNow is the time on the store's clock.
func (e *Engine) storeNow() time.Time { return e.gate.StoreNow() }

// untilStore is how long this machine waits until t on the store's clock.
func (e *Engine) untilStore(t time.Time) time.Duration { return e.gate.UntilStore(t) }
