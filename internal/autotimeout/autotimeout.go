// Package autotimeout is the rule behind task.AutoTimeout, in one place
// for both claimers (the engine, and the API server for remote workers):
// an attempt's timeout is Factor × the p99 of the task's successful runs,
// within Floor and Ceiling, once MinRuns runs are on record, and Default
// before. The durations are the store's (store.Durations), cached per
// kind and name and asked for at most once per Refresh.
package autotimeout

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/grit-run/grit/internal/or"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The defaults. The factor is set by the failure it exists to prevent: a
// timeout tighter than the work turns a slow night (a seasonal load four
// times the usual) into timeouts, retries and dead letters. Five times the
// p99 lets runs four times slower than usual finish, with a margin; the
// floor keeps a fast kind's timeout clear of scheduling noise, and the
// ceiling still cuts off a hang within the hour. Twenty runs make a p99
// that is not one outlier; until then the default is the timeout commonly
// given to batch work.
const (
	DefaultFactor  = 5.0
	DefaultFloor   = time.Minute
	DefaultCeiling = time.Hour
	DefaultMinRuns = 20
	DefaultDefault = 30 * time.Minute
	DefaultRefresh = time.Minute
)

// Samples is how many of a task's newest successful runs the p99 is taken
// over.
const Samples = 200

// Settings are the rule's numbers; zero fields mean the defaults above.
type Settings struct {
	Factor  float64       // the multiple of the p99; default 5
	Floor   time.Duration // the least auto timeout; default 1m
	Ceiling time.Duration // the most; default 1h
	MinRuns int           // the successful runs needed before the p99 is used; default 20
	Default time.Duration // the timeout before; default 30m
	// Refresh is how long a task's p99 is kept before the store is asked
	// again: at most one query per kind (and name) per Refresh, never one
	// per attempt; default 1m.
	Refresh time.Duration
}

// WithDefaults returns s with its zero fields set to the defaults.
func (s Settings) WithDefaults() Settings {
	if s.Factor == 0 {
		s.Factor = DefaultFactor
	}
	s.Floor = or.Positive(s.Floor, DefaultFloor)
	s.Ceiling = or.Positive(s.Ceiling, DefaultCeiling)
	s.MinRuns = or.Positive(s.MinRuns, DefaultMinRuns)
	s.Default = or.Positive(s.Default, DefaultDefault)
	s.Refresh = or.Positive(s.Refresh, DefaultRefresh)
	return s
}

// Validate checks s; zero fields are the defaults.
func (s Settings) Validate() error {
	switch {
	case s.Factor < 0 || math.IsNaN(s.Factor) || math.IsInf(s.Factor, 0):
		return fmt.Errorf("auto timeout: factor %v: want a positive number (e.g. 5)", s.Factor)
	case s.Floor < 0 || s.Ceiling < 0 || s.Default < 0 || s.Refresh < 0 || s.MinRuns < 0:
		return errors.New("auto timeout: negative floor, ceiling, default, refresh or minimum runs")
	}
	d := s.WithDefaults()
	if d.Floor > d.Ceiling {
		return fmt.Errorf("auto timeout: floor %s above ceiling %s", retry.FormatDuration(d.Floor), retry.FormatDuration(d.Ceiling))
	}
	return nil
}

// Choose is the rule: the timeout for a task whose successful runs have
// the given p99 over runs runs, and how it was chosen, e.g.
// "auto: 5 × p99 2m of 140 runs" or "auto: default, 3 runs so far". s must
// have its defaults set.
func (s Settings) Choose(p99 time.Duration, runs int) (time.Duration, string) {
	if runs < s.MinRuns {
		return s.Default, fmt.Sprintf("auto: default, %d runs so far", runs)
	}
	shown := p99
	if shown >= time.Millisecond {
		shown = shown.Round(time.Millisecond)
	}
	src := fmt.Sprintf("auto: %g × p99 %s of %d runs", math.Round(s.Factor*100)/100, retry.FormatDuration(shown), runs)
	f := s.Factor * float64(p99) // in float: a huge p99 must not overflow
	switch {
	case f < float64(s.Floor):
		return s.Floor, src + ", floor"
	case f > float64(s.Ceiling):
		return s.Ceiling, src + ", ceiling"
	}
	return time.Duration(f), src
}

// IsAuto tells whether a timeout's source says it was chosen by the rule.
func IsAuto(source string) bool { return strings.HasPrefix(source, "auto") }

// Keep puts an attempt's auto timeout (d, chosen as source says) on its
// record f, once f's outcome is decided, for both claimers. A success
// keeps none: its attempt is written on the task row alone (a plain
// success, one write), which has no place for it, and keeping it would
// cost every success an attempt row of its own, more than doubling what
// the database spends on it (queuecmp's grit-features), for a timeout
// that did not matter. An attempt that failed or timed out keeps it,
// where it explains what happened.
func Keep(f *store.Finish, d time.Duration, source string) {
	if !IsAuto(source) || f.Outcome() == task.OutcomeSuccess {
		return
	}
	f.Attempt.Timeout, f.Attempt.TimeoutSource = d, source
}

// P99 is the 99th percentile of ds, which must not be empty.
func P99(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*99/100]
}

// Cache keeps each task's p99 (by kind and name) for Refresh.
type Cache struct {
	set   Settings
	store store.Store
	now   func() time.Time

	mu      sync.Mutex
	entries map[[2]string]*entry
}

type entry struct {
	mu   sync.Mutex // held while the store is asked: one query at a time
	at   time.Time  // when asked; zero: never
	p99  time.Duration
	runs int
	// timeout and source are Choose's answer for p99 and runs, worked
	// out when they change rather than formatted at every attempt.
	timeout time.Duration
	source  string
}

// NewCache returns a cache on st (which should be a store.Durations;
// without, every auto timeout is the default) under set, on the clock now.
func NewCache(st store.Store, set Settings, now func() time.Time) *Cache {
	return &Cache{set: set.WithDefaults(), store: st, now: now, entries: map[[2]string]*entry{}}
}

// Timeout returns the auto timeout of a task of kind and name, and how it
// was chosen. A store that cannot answer keeps what was known before.
func (c *Cache) Timeout(ctx context.Context, kind, name string) (time.Duration, string) {
	key := [2]string{kind, name}
	c.mu.Lock()
	en := c.entries[key]
	if en == nil {
		en = &entry{}
		c.entries[key] = en
	}
	c.mu.Unlock()

	en.mu.Lock()
	defer en.mu.Unlock()
	if now := c.now(); en.at.IsZero() || now.Sub(en.at) >= c.set.Refresh {
		en.at = now
		if c.store != nil {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			durs, err := c.store.SuccessDurations(ctx, kind, name, Samples)
			cancel()
			if err == nil {
				en.runs = len(durs)
				if len(durs) > 0 {
					en.p99 = P99(durs)
				}
			}
		}
		en.timeout, en.source = c.set.Choose(en.p99, en.runs)
	}
	return en.timeout, en.source
}
