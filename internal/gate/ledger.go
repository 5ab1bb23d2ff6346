package gate

import (
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// ledger is what the gate knows of one claimer: the attempts it runs, by
// task, so that each group's share of its slots (the ramp after a breaker
// closes, the window under pressure) is counted, and the places its ended
// attempts freed in a queue, tenant or group that was full.
type ledger struct {
	held     map[int64]heldTask // its running attempts, by task
	running  map[string]int     // of held, per group
	capacity int                // its slots, busy and free, as of its last claim
	// window is, per group under resource pressure, how many attempts the
	// claimer runs at once: halved on resource failures, grown by one per
	// window of successes, so that the fleet settles at what the
	// downstream can take.
	window map[string]*window
	// freed counts, per queue, tenant or group left out as full, the
	// attempts of it the claimer has ended since: its next claim takes
	// that many of its tasks at once, rather than waiting out LimitWait.
	freed map[Full]int
	seen  time.Time // on this machine's clock
}

// heldTask is what the ledger keeps of a running attempt's task: what
// its limits and groups are counted by.
type heldTask struct {
	token                int64
	group, queue, tenant string
}

func heldOf(t task.Task) heldTask {
	return heldTask{token: t.LeaseToken, group: t.Group, queue: t.Queue, tenant: t.Tenant}
}

// scope is the name of the task's queue, tenant or group.
func (h heldTask) scope(s store.Scope) string {
	switch s {
	case store.ScopeQueue:
		return h.queue
	case store.ScopeTenant:
		return h.tenant
	}
	return h.group
}

// window is a group's share of a claimer's slots under pressure.
type window struct {
	size float64
	cut  time.Time // when it was last halved, on this machine's clock
}

// ledgerIdle is how long the gate keeps the ledger of a claimer it has
// not heard of: one that holds nothing goes at the next claim of another.
const ledgerIdle = time.Hour

// ledgerLocked returns a claimer's ledger, made if missing, and forgets
// the ledgers of claimers gone quiet.
func (g *Gate) ledgerLocked(worker string, now time.Time) *ledger {
	l := g.ledgers[worker]
	if l == nil {
		for id, o := range g.ledgers {
			if len(o.held) == 0 && now.Sub(o.seen) > time.Minute || now.Sub(o.seen) > ledgerIdle {
				delete(g.ledgers, id)
			}
		}
		l = &ledger{held: map[int64]heldTask{}, running: map[string]int{}, window: map[string]*window{}}
		g.ledgers[worker] = l
	}
	l.seen = now
	return l
}

func (l *ledger) add(t task.Task) {
	if _, ok := l.held[t.ID]; ok {
		return
	}
	l.held[t.ID] = heldOf(t)
	if t.Group != "" {
		l.running[t.Group]++
	}
}

// remove forgets the attempt of task id under token, reporting whether the
// ledger held it.
func (l *ledger) remove(id, token int64) bool {
	h, ok := l.held[id]
	if !ok || h.token != token {
		return false
	}
	delete(l.held, id)
	if h.group != "" {
		if l.running[h.group]--; l.running[h.group] <= 0 {
			delete(l.running, h.group)
		}
	}
	return true
}

// scopes are the limits the gate counts with store.Limiter.Running.
var scopes = [...]store.Scope{store.ScopeQueue, store.ScopeTenant}

// scopeOf is the name of t's queue, tenant or group.
func scopeOf(t task.Task, s store.Scope) string { return heldOf(t).scope(s) }

// freeLocked records that an attempt of t ended: each of its queue,
// tenant and group that is left out as full has a place again, which the
// claimer's next claim takes. It reports whether any had.
func (g *Gate) freeLocked(l *ledger, t *task.Task, now time.Time) bool {
	freed := false
	for _, s := range [...]store.Scope{store.ScopeQueue, store.ScopeTenant, store.ScopeGroup} {
		f := Full{s, scopeOf(*t, s)}
		if f.Name == "" {
			continue
		}
		until, full := g.full[f]
		if !full || !now.Before(until) {
			continue
		}
		if l.freed == nil {
			l.freed = map[Full]int{}
		}
		l.freed[f]++
		freed = true
	}
	return freed
}
