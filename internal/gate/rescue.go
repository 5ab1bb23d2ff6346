package gate

import (
	"context"
	"time"

	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/store"
)

// Rescue takes over expired leases (or, with req.Owner, every lease of a
// worker known to be dead), a hundred at a time, and decides each task by
// its policy's interrupted rule. done, if set, is told of each batch
// recorded. It returns when no expired lease is left, or on an error.
func (g *Gate) Rescue(ctx context.Context, req store.RescueRequest, done func([]End)) error {
	for {
		req.Limit = 100
		ts, err := g.cfg.Store.Rescue(ctx, req)
		if err != nil || len(ts) == 0 {
			return err
		}
		now := g.StoreNow()
		fs := make([]store.Finish, len(ts))
		for i, t := range ts {
			fs[i] = decide.Interrupted(t, g.cfg.Policy(t), now)
			if g.cfg.Decided != nil {
				g.cfg.Decided(t, &fs[i])
			}
		}
		errs, err := g.cfg.Store.Finish(ctx, fs)
		if err != nil {
			return err
		}
		ends := make([]End, len(ts))
		for i, t := range ts {
			ends[i] = End{Task: &ts[i], Finish: &fs[i], Err: errs[i]}
			if errs[i] == nil {
				g.cfg.Logger.Info("rescued a task from a silent worker", "task", t.ID, "state", fs[i].State)
				g.cfg.Metrics.Rescued(&ts[i])
			}
		}
		g.alertDeadLetters(ends)
		g.count(ends)
		if done != nil {
			done(ends)
		}
		g.changed()
	}
}

// RescueLoop rescues expired leases for req's rescuer at once and then on
// every tick of the clock's ticker of period every, until ctx ends. It is
// the one rescue loop of grit: every Go worker runs it, and so does the
// API server, so that a fleet recovers as long as one of them lives. Each
// pass is bounded by the rescuer's lease (req.Lease; a minute if unset):
// a store that never answers delays the next pass, never ends the loop.
func (g *Gate) RescueLoop(ctx context.Context, every time.Duration, req store.RescueRequest, done func([]End)) {
	t := g.cfg.Clock.NewTicker(every)
	defer t.Stop()
	bound := req.Lease
	if bound <= 0 {
		bound = time.Minute
	}
	for {
		pass, cancel := context.WithTimeout(ctx, bound)
		if err := g.Rescue(pass, req, done); err != nil && ctx.Err() == nil {
			g.cfg.Logger.Warn("rescue failed", "err", err)
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}
