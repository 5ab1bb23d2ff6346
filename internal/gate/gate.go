// Package gate is the downstream protection that every claimer shares:
// the engine for Go workers and the API server for remote workers. It
// decides what a claimer may take and records what happened, so that a
// rule is written once:
//
//   - the groups' circuit breakers, kept in the store for the fleet: an
//     open or half-open group's tasks are not claimed, but for the probes
//     its breaker lets through, and a closed one ramps back up; a group
//     that fails fast has its tasks failed at once while it cools down;
//   - resource pressure: a group whose downstream is full is held back
//     for a growing delay, and each claimer narrows its own window of the
//     group's attempts (additive increase, multiplicative decrease);
//   - the groups' retry budgets, the limits of running attempts per
//     queue, tenant and group, and the rates (calls a second) per queue,
//     kind, group and tenant: what passes them is given back to wait,
//     using no attempt;
//   - a downstream's Retry-After (retry.After): its group is held that
//     long, once, for the fleet;
//   - the rescue of expired leases, decided by each task's interrupted
//     rule.
//
// A Gate serves any number of claimers, each known by its worker id, with
// a ledger of the attempts it runs (the engine is one claimer; the server
// keeps one per remote worker). Claim, Ended and Lost keep the ledger.
package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Config configures a Gate.
type Config struct {
	// Store keeps the groups and limits; it must be a store.GroupBreakers
	// and a store.Limiter.
	Store      store.Store
	Protection Protection
	// Policy is the retry policy of a task the gate decides (a rescued
	// task's interrupted rule, a fail-fast refusal); default the task's
	// own, else retry.CommonFourTimes.
	Policy func(task.Task) retry.Policy
	// Decided, if set, may add to the end the gate decided for a rescued
	// task before it is recorded (the engine's catch task).
	Decided func(task.Task, *store.Finish)
	// Clock is this machine's clock; default the real one. The store's
	// clock is read through it (see StoreNow).
	Clock  clock.Clock
	Logger *slog.Logger
	// OnChange, if set, is called when the gate may hold back less than
	// before (a breaker closed or let probes through, a group's pressure
	// or limit eased, a rescue made tasks due): a claimer waiting for work
	// should look again.
	OnChange func()
	// Alert, if set, is given the alerts the gate raises, once the store
	// has recorded what each is about: a task dead-lettered (by any
	// claimer, or by a rescue), a group's breaker opened, a kind or group
	// held as an outage (HeldOutage). It must not block (alert.Alerter's
	// Send queues).
	Alert func(alert.Event)
	// Metrics, if set, counts what the gate sees of every claimer: the
	// attempts ended and their outcomes, claims and their errors, the
	// tasks rescued. It is the one place both claimers count them.
	Metrics Metrics
}

// Gate is the downstream protection of a set of claimers on one store.
type Gate struct {
	cfg  Config
	gb   store.GroupBreakers
	lim  store.Limiter
	skew atomic.Int64 // the store's clock minus this machine's, in ns

	mu     sync.Mutex
	read   time.Time // when the groups and limits were read, on this machine's clock
	groups map[string]store.Group
	max    map[store.Scope]map[string]int
	rates  map[store.RateKey]bool // the scopes that have a rate
	paused pausedSet              // the pauses (see pause.go)
	full   map[Full]time.Time     // queues, tenants and groups at their limit, until when
	tried  map[string]time.Time   // when a probe of a group was last sought
	probes map[int64]int64        // the tasks claimed as their group's probe, with their lease token
	// outages are the holds and fingerprints known to be outages, until
	// when: a failure of one is not asked about again before then.
	outages map[string]time.Time
	// notOutages are the holds and fingerprints whose failures were found
	// no outage, until when a retry's is not asked about again.
	notOutages map[string]time.Time
	// kindHolds counts the kinds held as an outage, so that work without
	// a group looks for its kind's hold only while there is one.
	kindHolds int
	// pressed holds a group back, on this machine's clock, from when one
	// of its attempts ended in a resource failure until its result is
	// recorded in the store (Ended), which then holds it for the fleet.
	pressed map[string]time.Time
	ledgers map[string]*ledger
}

// New returns a gate on cfg.Store.
func New(cfg Config) (*Gate, error) {
	if err := cfg.Protection.Validate(); err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	cfg.Protection = cfg.Protection.WithDefaults()
	cfg.Clock = clock.Or(cfg.Clock)
	cfg.Metrics = OrNoMetrics(cfg.Metrics)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Policy == nil {
		cfg.Policy = func(t task.Task) retry.Policy {
			p, _ := decide.Policy(t, retry.CommonFourTimes)
			return p
		}
	}
	return &Gate{
		cfg: cfg, gb: cfg.Store, lim: cfg.Store,
		full: map[Full]time.Time{}, pressed: map[string]time.Time{}, tried: map[string]time.Time{}, probes: map[int64]int64{}, ledgers: map[string]*ledger{}, outages: map[string]time.Time{}, notOutages: map[string]time.Time{},
	}, nil
}

// Full names a queue, tenant or group at its limit.
type Full struct {
	Scope store.Scope
	Name  string
}

// LimitWait is how long a task given back at a limit waits, and how long
// a claimer then leaves the queue, tenant or group alone.
const LimitWait = 100 * time.Millisecond

// probeRetry spaces the gate's attempts to take a probe of a group.
const probeRetry = 100 * time.Millisecond

// Due times, lease expiries, breakers and budgets are on the store's clock
// (PostgreSQL's, for a fleet), which may differ from this machine's. The
// gate measures the difference (the skew) at every Refresh and reads the
// store's time as its own clock plus the skew.

// MeasureSkew reads the store's clock and records how far it is from this
// machine's, taking the middle of the round trip as the moment it was read.
func (g *Gate) MeasureSkew(ctx context.Context) error {
	before := g.cfg.Clock.Now()
	at, err := g.cfg.Store.Now(ctx)
	if err != nil {
		return err
	}
	after := g.cfg.Clock.Now()
	g.skew.Store(int64(at.Sub(before.Add(after.Sub(before) / 2))))
	return nil
}

// StoreNow is the time on the store's clock.
func (g *Gate) StoreNow() time.Time {
	return g.cfg.Clock.Now().Add(time.Duration(g.skew.Load()))
}

// UntilStore is how long this machine waits until t on the store's clock.
func (g *Gate) UntilStore(t time.Time) time.Duration {
	return t.Add(-time.Duration(g.skew.Load())).Sub(g.cfg.Clock.Now())
}

// Refresh measures the store's clock and reads the groups and the limits;
// on an error it keeps the last known. It calls OnChange when the groups
// held back changed.
func (g *Gate) Refresh(ctx context.Context) error {
	if err := g.MeasureSkew(ctx); err != nil {
		return fmt.Errorf("read the store's clock: %w", err)
	}
	groups, err := g.gb.Groups(ctx)
	if err != nil {
		return fmt.Errorf("read the groups' breakers: %w", err)
	}
	ls, err := g.lim.Limits(ctx)
	if err != nil {
		return fmt.Errorf("read the limits: %w", err)
	}
	rs, err := g.lim.Rates(ctx)
	if err != nil {
		return fmt.Errorf("read the rates: %w", err)
	}
	rates := make(map[store.RateKey]bool, len(rs))
	for _, r := range rs {
		rates[r.RateKey] = true
	}
	var paused pausedSet
	if p, ok := g.cfg.Store.(store.Pauser); ok {
		ps, err := p.Pauses(ctx)
		if err != nil {
			return fmt.Errorf("read the pauses: %w", err)
		}
		paused = pausesOf(ps)
	}
	max := map[store.Scope]map[string]int{}
	for _, l := range ls {
		if max[l.Scope] == nil {
			max[l.Scope] = map[string]int{}
		}
		max[l.Scope][l.Name] = l.Max
	}
	now := g.StoreNow()
	g.mu.Lock()
	before := g.heldBackLocked(now)
	g.read, g.groups, g.max, g.rates, g.paused = g.cfg.Clock.Now(), groups, max, rates, paused
	g.countKindHoldsLocked("")
	after := g.heldBackLocked(now)
	g.mu.Unlock()
	if !slices.Equal(before, after) {
		g.cfg.Logger.Info("groups held back by their breaker or pressure", "groups", after)
		g.changed()
	}
	return nil
}

// RefreshIfOlder refreshes when the last read is older than age, and
// logs an error rather than returning it: a claim goes on with what the
// gate knows.
func (g *Gate) RefreshIfOlder(ctx context.Context, age time.Duration) {
	g.mu.Lock()
	stale := g.cfg.Clock.Now().Sub(g.read) >= age
	g.mu.Unlock()
	if !stale {
		return
	}
	if err := g.Refresh(ctx); err != nil {
		g.cfg.Logger.Warn("could not refresh the groups and limits; keeping the last known", "err", err)
	}
}

func (g *Gate) changed() {
	if g.cfg.OnChange != nil {
		g.cfg.OnChange()
	}
}

// setGroup keeps a group as an update left it.
func (g *Gate) setGroup(name string, gr store.Group) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.groups == nil {
		g.groups = map[string]store.Group{}
	}
	g.groups[name] = gr
	g.countKindHoldsLocked(name)
}

// heldBackLocked are the groups held back at now whatever the claimer: an
// open or half-open breaker (but for a group failing fast, whose tasks are
// claimed to fail at once), or resource pressure.
func (g *Gate) heldBackLocked(now time.Time) []string {
	var out []string
	for name, gr := range g.groups {
		if now.Before(gr.Pressure.Until) || (isOpen(gr.Circuit) && !FailsFast(gr, now)) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func isOpen(c breaker.Circuit) bool { return c.State == breaker.Open || c.State == breaker.HalfOpen }

// FailsFast reports whether a group's tasks fail at once at now, whoever
// claims them: the group fails fast and its breaker is open, cooling down.
func FailsFast(g store.Group, now time.Time) bool {
	return g.FailFast && g.Circuit.State == breaker.Open && now.Before(g.Circuit.NextProbe())
}

// ErrBreakerOpen fails, at once and for good, the tasks of a group that
// fails fast while its breaker is open.
var ErrBreakerOpen = errors.New("the group's circuit breaker is open")

// BreakerRefusal is the permanent error a task of group gets while the
// group fails fast.
func BreakerRefusal(group string) error {
	return retry.Permanent(fmt.Errorf("group %s: %w (the group fails fast)", group, ErrBreakerOpen))
}

// Groups returns the groups as the gate last read or wrote them.
func (g *Gate) Groups() map[string]store.Group {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.groups)
}
