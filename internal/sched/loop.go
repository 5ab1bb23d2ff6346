package sched

import (
	"context"
	"time"

	"github.com/grit-run/grit/internal/clock"
)

// Loop ticks k's store every `every` on c's timers, at the time now gives
// (the store's clock), until ctx ends: what every engine and grit server
// run. A store that keeps no schedules makes it return at once.
func Loop(ctx context.Context, k *Ticker, every time.Duration, c clock.Clock, now func() time.Time) {
	if _, err := Of(k.Store); err != nil {
		return
	}
	c = clock.Or(c)
	for {
		t := c.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		tctx, cancel := context.WithTimeout(ctx, max(every, 5*time.Second))
		if err := k.Tick(tctx, now()); err != nil && ctx.Err() == nil && k.Logger != nil {
			k.Logger.Warn("schedules could not be ticked; trying again at the next tick", "err", err)
		}
		cancel()
	}
}
