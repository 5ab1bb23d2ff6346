package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/grit-run/grit/internal/or"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The defaults of AutoTimeouts. The factor is set by the failure it exists
// to prevent: a timeout tighter than the work turns a slow night (a
// seasonal load four times the usual) into timeouts, retries and dead
// letters. Five times the p99 lets runs four times slower than usual
// finish, with a margin; the floor keeps a fast kind's timeout clear of
// scheduling noise, and the ceiling still cuts off a hang within the hour.
// Twenty runs make a p99 that is not one outlier; until then the default
// is the timeout commonly given to batch work.
const (
	DefaultAutoFactor  = 5.0
	DefaultAutoFloor   = time.Minute
	DefaultAutoCeiling = time.Hour
	DefaultAutoMinRuns = 20
	DefaultAutoDefault = 30 * time.Minute
	DefaultAutoRefresh = time.Minute
)

// AutoTimeouts is how the engine sets the timeout of an attempt whose task
// (or handler) asks for task.AutoTimeout: Factor × the p99 of the task's
// successful runs (of its kind, and its name when it has one), within
// Floor and Ceiling, once MinRuns runs are on record; Default before.
// Zero fields mean the defaults above.
type AutoTimeouts struct {
	Factor  float64
	Floor   time.Duration
	Ceiling time.Duration
	MinRuns int
	Default time.Duration
	// Refresh is how long the engine keeps a kind's p99 before it asks
	// the store again: at most one query per kind per Refresh, never one
	// per attempt.
	Refresh time.Duration
}

// WithDefaults returns a with its zero fields set to the defaults.
func (a AutoTimeouts) WithDefaults() AutoTimeouts {
	if a.Factor == 0 {
		a.Factor = DefaultAutoFactor
	}
	a.Floor = or.Positive(a.Floor, DefaultAutoFloor)
	a.Ceiling = or.Positive(a.Ceiling, DefaultAutoCeiling)
	a.MinRuns = or.Positive(a.MinRuns, DefaultAutoMinRuns)
	a.Default = or.Positive(a.Default, DefaultAutoDefault)
	a.Refresh = or.Positive(a.Refresh, DefaultAutoRefresh)
	return a
}

// Validate checks a's fields; zero ones are the defaults.
func (a AutoTimeouts) Validate() error {
	switch {
	case a.Factor < 0 || math.IsNaN(a.Factor) || math.IsInf(a.Factor, 0):
		return fmt.Errorf("auto timeout: factor %v: want a positive number (e.g. 5)", a.Factor)
	case a.Floor < 0 || a.Ceiling < 0 || a.Default < 0 || a.Refresh < 0 || a.MinRuns < 0:
		return errors.New("auto timeout: negative floor, ceiling, default, refresh or minimum runs")
	}
	d := a.WithDefaults()
	if d.Floor > d.Ceiling {
		return fmt.Errorf("auto timeout: floor %s above ceiling %s", retry.FormatDuration(d.Floor), retry.FormatDuration(d.Ceiling))
	}
	return nil
}

// Choose is the rule: the timeout for a task whose successful runs have
// the given p99 over runs runs, and how it was chosen, e.g.
// "auto: 5 × p99 2m of 140 runs" or "auto: default, 3 runs so far". a must
// have its defaults set.
func (a AutoTimeouts) Choose(p99 time.Duration, runs int) (time.Duration, string) {
	if runs < a.MinRuns {
		return a.Default, fmt.Sprintf("auto: default, %d runs so far", runs)
	}
	shown := p99
	if shown >= time.Millisecond {
		shown = shown.Round(time.Millisecond)
	}
	src := fmt.Sprintf("auto: %s × p99 %s of %d runs", formatFactor(a.Factor), retry.FormatDuration(shown), runs)
	f := a.Factor * float64(p99) // in float: a huge p99 must not overflow
	switch {
	case f < float64(a.Floor):
		return a.Floor, src + ", floor"
	case f > float64(a.Ceiling):
		return a.Ceiling, src + ", ceiling"
	}
	return time.Duration(f), src
}

func formatFactor(f float64) string {
	return fmt.Sprintf("%g", math.Round(f*100)/100)
}

// learned caches each task's p99 (by kind and name), refreshed at most
// once per AutoTimeouts.Refresh.
type learned struct {
	mu      sync.Mutex
	entries map[[2]string]*learnedEntry
}

type learnedEntry struct {
	mu   sync.Mutex // held while the store is asked: one query at a time
	at   time.Time  // when asked; zero: never
	p99  time.Duration
	runs int
}

// autoTimeout returns the timeout of an attempt of t under the engine's
// AutoTimeouts, and its source.
func (e *Engine) autoTimeout(t *task.Task) (time.Duration, string) {
	e.learned.mu.Lock()
	if e.learned.entries == nil {
		e.learned.entries = map[[2]string]*learnedEntry{}
	}
	key := [2]string{t.Kind, t.Name}
	en := e.learned.entries[key]
	if en == nil {
		en = &learnedEntry{}
		e.learned.entries[key] = en
	}
	e.learned.mu.Unlock()

	en.mu.Lock()
	defer en.mu.Unlock()
	now := e.cfg.Clock.Now()
	if en.at.IsZero() || now.Sub(en.at) >= e.cfg.AutoTimeouts.Refresh {
		en.at = now
		if ds, ok := e.cfg.Store.(store.Durations); ok {
			ctx, cancel := context.WithTimeout(e.runCtx, 2*time.Second)
			durs, err := ds.SuccessDurations(ctx, t.Kind, t.Name, hintSamples)
			cancel()
			if err == nil { // on an error, what was known stays
				en.runs = len(durs)
				if len(durs) > 0 {
					en.p99 = p99(durs)
				}
			}
		}
	}
	return e.cfg.AutoTimeouts.Choose(en.p99, en.runs)
}

// timeoutFor is the timeout of an attempt of t by handler h, and where it
// came from: the task's own, else the handler's; either may ask for an
// auto timeout.
func (e *Engine) timeoutFor(t *task.Task, h *Handler) (time.Duration, string) {
	d, src := t.Timeout, "task"
	if d == 0 {
		d, src = h.Timeout, "handler"
	}
	if d == task.AutoTimeout {
		return e.autoTimeout(t)
	}
	return d, src
}

// autoSource is src when it tells how an auto timeout was chosen, else "".
func autoSource(src string) string {
	if strings.HasPrefix(src, "auto") {
		return src
	}
	return ""
}
