package gate

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/or"
	"github.com/grit-run/grit/store"
)

// Protection is how a claimer protects the downstreams its tasks call: the
// one set of settings that the engine (for Go workers), the API server (for
// remote workers) and grit.Config embed, defaulted and checked here alone.
// Zero fields mean the documented defaults.
type Protection struct {
	// Breaker configures the groups' circuit breakers, kept in the store
	// and shared by every claimer on it; a group's own settings replace
	// them. Zero fields mean breaker's defaults.
	Breaker breaker.Settings
	// A resource failure holds its whole group back for PressureBase, each
	// further one for twice as long, up to PressureMax; each success eases
	// it a step. Default 1s and 1m.
	PressureBase, PressureMax time.Duration
	// RetryBudget bounds each group's retries, fleet-wide, to a share of
	// its first attempts plus a floor (store.Group.Budget); a retry past it
	// waits BudgetWait, using no attempt. Zero rates mean
	// store.DefaultBudget (20% of first attempts, one a second, ten at
	// once); the wait defaults to 1s.
	RetryBudget store.BudgetRates
	BudgetWait  time.Duration
	// OutageTasks and OutageWindow tell an outage from poison: a failure
	// that would dead-letter its task as poison is an outage instead when
	// OutageTasks distinct tasks of its group (or, without one, of its
	// kind) failed with the same fingerprint within OutageWindow and none
	// of them succeeded. Then the task is retried and the group or kind is
	// held, as an open breaker holds a group, until a probe succeeds.
	// Default 5 tasks and 1m; a negative OutageTasks turns it off.
	OutageTasks  int
	OutageWindow time.Duration
}

// Defaults of Protection.
const (
	DefaultPressureBase = time.Second
	DefaultPressureMax  = time.Minute
	DefaultBudgetWait   = time.Second
	DefaultOutageTasks  = 5
	DefaultOutageWindow = time.Minute
)

// Validate reports settings that cannot work, saying which and why.
func (p Protection) Validate() error {
	var errs []error
	if err := p.Breaker.Validate(); err != nil {
		errs = append(errs, err)
	}
	if p.OutageWindow < 0 {
		errs = append(errs, fmt.Errorf("negative outage window %v", p.OutageWindow))
	}
	if p.OutageTasks == 1 {
		errs = append(errs, fmt.Errorf("outage tasks 1: one task failing alike is poison, not an outage: want 2 or more (or a negative number to turn the outage detector off)"))
	}
	if p.PressureBase < 0 || p.PressureMax < 0 || p.BudgetWait < 0 {
		errs = append(errs, fmt.Errorf("negative pressure base %v, pressure max %v or budget wait %v", p.PressureBase, p.PressureMax, p.BudgetWait))
	}
	d := p.WithDefaults()
	if d.PressureMax < d.PressureBase {
		errs = append(errs, fmt.Errorf("pressure max %v is shorter than the pressure base %v", d.PressureMax, d.PressureBase))
	}
	if err := ValidateBudget(p.RetryBudget); p.RetryBudget != (store.BudgetRates{}) && err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ValidateBudget checks a retry budget's rates.
func ValidateBudget(r store.BudgetRates) error {
	for _, v := range []float64{r.Ratio, r.Floor, r.Burst} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("retry budget %v,%v,%v: want RATIO,FLOOR,BURST, each a finite number 0 or more (e.g. 0.2,1,10)", r.Ratio, r.Floor, r.Burst)
		}
	}
	if r.Burst < 1 {
		return fmt.Errorf("retry budget %v,%v,%v: a burst of %v lets no retry through: want 1 or more", r.Ratio, r.Floor, r.Burst, r.Burst)
	}
	return nil
}

// WithDefaults returns p with its zero (or negative) fields at their
// defaults.
func (p Protection) WithDefaults() Protection {
	p.PressureBase = or.Positive(p.PressureBase, DefaultPressureBase)
	p.PressureMax = or.Positive(p.PressureMax, DefaultPressureMax)
	p.BudgetWait = or.Positive(p.BudgetWait, DefaultBudgetWait)
	if p.OutageTasks == 0 {
		p.OutageTasks = DefaultOutageTasks
	}
	p.OutageWindow = or.Positive(p.OutageWindow, DefaultOutageWindow)
	if p.RetryBudget == (store.BudgetRates{}) {
		p.RetryBudget = store.DefaultBudget
	}
	return p
}

// Settings are a group's breaker settings: its own, else p's.
func (p Protection) Settings(g store.Group) breaker.Settings {
	if g.Settings != nil {
		return *g.Settings
	}
	return p.Breaker
}
