package engine

import (
	"context"
	"slices"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/store"
)

// circuits is the engine's copy of the groups' breakers, read from the
// store at start and at every heartbeat, so that every worker of a fleet
// stops dispatching a group within a heartbeat of its breaker opening.
type circuits map[string]breaker.Circuit

// refreshCircuits reads the groups' breakers, when the store keeps them,
// and wakes the claim loop when a group opened or closed.
func (e *Engine) refreshCircuits(ctx context.Context) {
	gb, ok := e.cfg.Store.(store.GroupBreakers)
	if !ok {
		return
	}
	cs, err := gb.Circuits(ctx)
	if err != nil {
		e.cfg.Logger.Warn("could not read the groups' breakers; keeping the last known", "err", err)
		return
	}
	before := e.openGroups()
	next := circuits(cs)
	e.circuits.Store(&next)
	if after := e.openGroups(); !slices.Equal(before, after) {
		e.cfg.Logger.Info("groups with an open breaker", "groups", after)
		e.Wake()
	}
}

// openGroups are the groups whose breaker is open now: their tasks are
// not claimed. A breaker whose cool-down has passed lets its group's
// tasks through.
func (e *Engine) openGroups() []string {
	cs := e.circuits.Load()
	if cs == nil {
		return nil
	}
	now := e.storeNow()
	var out []string
	for g, c := range *cs {
		if c.State == breaker.Open && now.Before(c.NextProbe()) {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}
