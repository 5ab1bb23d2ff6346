package grit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/retry"
)

// Errors of steps.
var (
	// ErrStepOrder: a step reached in another place than an earlier
	// attempt of its task recorded (see Step).
	ErrStepOrder = engine.ErrStepOrder
	// ErrNoAttempt: a step run with a context that is not a handler's.
	ErrNoAttempt = engine.ErrNoAttempt
)

// StepOption configures a step.
type StepOption func(*stepConfig)

type stepConfig struct {
	policy *retry.Policy
	err    error
}

// StepPolicy retries the step in-process by a policy string ("3 100ms
// 2s", see retry.Parse), drawing on the retries its task's policy has
// left for the attempt: a step's retries and its task's never multiply.
func StepPolicy(p string) StepOption {
	return func(c *stepConfig) {
		pol, err := retry.Parse(p)
		if err != nil {
			c.err = err
			return
		}
		c.policy = &pol
	}
}

// StepRetry is StepPolicy with a retry.Policy.
func StepRetry(p retry.Policy) StepOption { return func(c *stepConfig) { c.policy = &p } }

// Step runs fn as a durable step of the handler whose context ctx is: the
// first time, it runs fn and records its result (as JSON) with the task;
// on a later attempt of the same task, a step already recorded returns its
// recorded result without running fn. So a retried handler resumes after
// its last finished step: a card charged by a step is not charged again.
//
// Steps are identified by name and occurrence (the second step named
// "fetch" is the second occurrence of "fetch"), and an attempt must reach
// them in the order recorded, so their order may depend only on the
// task's args and earlier steps' results; a step reached elsewhere fails
// the task permanently with an error matching ErrStepOrder. The value
// returned is always the result decoded from its JSON, on the first run
// as on a replay. A result is at most 1 MiB of JSON: record a reference to
// a large one. A step's error is returned as fn returned it, and nothing
// is recorded; the handler returns it (the task is retried by its policy)
// or goes on. Steps of one attempt run one at a time.
func Step[T any](ctx context.Context, name string, fn func(ctx context.Context) (T, error), opts ...StepOption) (T, error) {
	var zero T
	var cfg stepConfig
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.err != nil {
		return zero, retry.Permanent(fmt.Errorf("grit: step %q: %w", name, cfg.err))
	}
	raw, _, err := engine.Step(ctx, name, cfg.policy, func(ctx context.Context) (json.RawMessage, error) {
		v, err := fn(ctx)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, retry.Permanent(fmt.Errorf("grit: step %q: its result does not encode as JSON: %w", name, err))
		}
		return b, nil
	})
	if err != nil {
		return zero, err
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return zero, retry.Permanent(fmt.Errorf("grit: step %q: the recorded result does not decode into %T (did the step's type change since it was recorded?): %w", name, v, err))
	}
	return v, nil
}
