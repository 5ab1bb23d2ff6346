package machine

import (
	"context"
	"log/slog"
	"time"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/store"
)

// Ticker delivers the events of the instances of its machines that are
// due: every worker that knows a machine ticks its instances, without a
// leader; the versioned writes make one move per instance.
type Ticker struct {
	Store    store.Store
	Machines []fsm.Machine
	Logger   *slog.Logger
}

// maxPages bounds the instances one tick moves, per machine, by pages of
// a hundred: a backlog goes down over several ticks.
const maxPages = 10

// Tick moves on the instances due at now.
func (k *Ticker) Tick(ctx context.Context, now time.Time) error {
	ms, err := Of(k.Store)
	if err != nil {
		return err
	}
	for i := range k.Machines {
		m := &k.Machines[i]
		after := ""
		for range maxPages {
			rows, err := ms.Instances(ctx, store.InstanceFilter{Machine: m.Name, DueBy: now, AfterKey: after, Limit: 100})
			if err != nil {
				return err
			}
			for _, r := range rows {
				k.move(ctx, ms, m, r, now)
			}
			if len(rows) < 100 {
				break
			}
			after = rows[len(rows)-1].Key
		}
	}
	return ctx.Err()
}

// move advances one instance, once: another worker that moved it first
// did the work.
func (k *Ticker) move(ctx context.Context, ms store.Machines, m *fsm.Machine, r store.InstanceRow, now time.Time) {
	in, err := decode(r.State)
	if err == nil {
		_, _, err = write(ctx, k.Store, ms, m, r, in, now)
	}
	if err != nil && ctx.Err() == nil && k.Logger != nil {
		k.Logger.Warn("state machine instance could not be moved on; trying again at the next tick", "machine", m.Name, "key", r.Key, "err", err)
	}
}

// Poke names an instance whose state's task just ended.
type Poke struct{ Machine, Key string }

// Loop ticks k every `every` on c's timers, at the time now gives, and
// moves at once each instance poked (its task ended in this process),
// until ctx ends.
func Loop(ctx context.Context, k *Ticker, every time.Duration, c clock.Clock, now func() time.Time, pokes <-chan Poke) {
	if _, err := Of(k.Store); err != nil || len(k.Machines) == 0 {
		return
	}
	c = clock.Or(c)
	byName := map[string]fsm.Machine{}
	for _, m := range k.Machines {
		byName[m.Name] = m
	}
	t := c.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-pokes:
			if m, ok := byName[p.Machine]; ok {
				if _, err := Advance(ctx, k.Store, m, p.Key, now()); err != nil && ctx.Err() == nil && k.Logger != nil {
					k.Logger.Warn("state machine instance could not be moved on; its next tick will", "machine", p.Machine, "key", p.Key, "err", err)
				}
			}
		case <-t.C():
			tctx, cancel := context.WithTimeout(ctx, max(every, 5*time.Second))
			if err := k.Tick(tctx, now()); err != nil && ctx.Err() == nil && k.Logger != nil {
				k.Logger.Warn("state machines could not be ticked; trying again at the next tick", "err", err)
			}
			cancel()
			t.Reset(every)
		}
	}
}
