package server

import (
	"context"
	"time"

	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
)

// rescueLoop takes over, every Config.Rescue, the tasks whose lease
// expired (their worker died or froze), so that a fleet of remote workers
// recovers without a Go worker beside them.
func (s *Server) rescueLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.Rescue)
	defer t.Stop()
	for {
		if err := s.rescue(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("rescue failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.stopping:
			return
		case <-t.C:
		}
	}
}

// rescue takes over expired leases, a hundred at a time, and decides each
// task by its policy's interrupted rule, as a Go worker does.
func (s *Server) rescue(ctx context.Context) error {
	for {
		ts, err := s.cfg.Store.Rescue(ctx, store.RescueRequest{Worker: s.cfg.ID, Lease: s.cfg.Lease, Limit: 100})
		if err != nil || len(ts) == 0 {
			return err
		}
		now, err := s.cfg.Store.Now(ctx)
		if err != nil {
			return err
		}
		fs := make([]store.Finish, len(ts))
		for i, t := range ts {
			p, perr := decide.Policy(t, retry.CommonFourTimes)
			if perr != nil {
				s.cfg.Logger.Error("task has a bad retry policy; using the default", "task", t.ID, "err", perr)
			}
			fs[i] = decide.Interrupted(t, p, now)
		}
		if _, err := s.cfg.Store.Finish(ctx, fs); err != nil {
			return err
		}
		for i, t := range ts {
			s.cfg.Logger.Info("rescued a task from a silent worker", "task", t.ID, "state", fs[i].State)
		}
		s.wake.notify()
	}
}
