package engine

import (
	"context"
	"fmt"

	"github.com/grit-run/grit/internal/sched"
)

// declareSchedules puts the engine's schedules in the store.
func (e *Engine) declareSchedules(ctx context.Context) error {
	if len(e.cfg.Schedules) == 0 {
		return nil
	}
	sctx, cancel := e.storeCtx(ctx)
	defer cancel()
	if err := sched.Declare(sctx, e.cfg.Store, e.gate.StoreNow(), e.cfg.Schedules...); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	return nil
}

// scheduleLoop ticks the store's schedules every ScheduleEvery, on the
// store's clock, as every engine of the fleet does: the slots' keys and
// the schedules' versioned writes make one task per slot.
func (e *Engine) scheduleLoop() {
	if e.cfg.Run != 0 {
		return
	}
	k := &sched.Ticker{Store: e.cfg.Store, Logger: e.cfg.Logger, Alert: e.alerts.Send}
	sched.Loop(e.runCtx, k, e.cfg.ScheduleEvery, e.cfg.Clock, e.gate.StoreNow)
}
