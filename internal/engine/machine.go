package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/grit-run/grit/internal/machine"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// machineLoop delivers the events of the instances of the engine's
// machines (Config.Machines): at once for an instance whose state's task
// this engine just finished, and every ScheduleEvery for the others.
func (e *Engine) machineLoop() {
	if len(e.cfg.Machines) == 0 {
		return
	}
	k := &machine.Ticker{Store: e.cfg.Store, Machines: e.cfg.Machines, Logger: e.cfg.Logger}
	machine.Loop(e.runCtx, k, e.cfg.ScheduleEvery, e.cfg.Clock, e.gate.StoreNow, e.pokes)
}

// machineEnded pokes the machine loop when t, whose attempt just ended in
// state, enters a state of an instance and has ended (or waits for an
// operator).
func (e *Engine) machineEnded(t *task.Task, state task.State) {
	if len(e.cfg.Machines) == 0 || state.Waiting() {
		return
	}
	m, key, _, ok := machine.ParseKey(t.IdempotencyKey)
	if !ok {
		return
	}
	select {
	case e.pokes <- machine.Poke{Machine: m, Key: key}:
	default: // the loop is behind: its tick moves the instance
	}
}

// Next asks, from the handler of a state an instance is entering, for
// event to be delivered to the instance first once the handler has
// succeeded (machine.Next).
func Next(ctx context.Context, event string, payload json.RawMessage) error {
	c, ok := ctx.Value(stepKey{}).(*attemptCtx)
	if !ok {
		return fmt.Errorf("next %q: %w (give it the context the handler got)", event, ErrNoAttempt)
	}
	if c.e.cfg.Store == nil { // a child: the instance is the worker's to move
		return retry.Permanent(fmt.Errorf("next %q: a state's handler that runs isolated (HandlerConfig.Isolate) cannot ask for the next event yet: run it in the worker, or send the event (Client.Send) from the handler's caller: %w", event, ErrChild))
	}
	return machine.Next(ctx, c.e.cfg.Store, c.a.t.ID, event, payload, c.e.gate.StoreNow())
}
