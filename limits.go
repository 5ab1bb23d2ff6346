package grit

import (
	"context"
	"fmt"

	"github.com/grit-run/grit/rate"
	"github.com/grit-run/grit/store"
)

// Rate is a limit of calls a second on a queue, kind, group or tenant,
// shared by every worker of the store (Client.SetRate).
type Rate struct {
	Scope string     // "queue", "kind", "group" or "tenant"
	Name  string     // the queue's, kind's, group's or tenant's
	Limit rate.Limit // calls a second, and how many at once
	// Waiting is about how many tasks the rate holds back now: given
	// back, using no attempt, each told when to come again.
	Waiting int
}

// SetRate sets the most calls a second that the tasks of a queue, kind,
// group or tenant start across the fleet (scope "queue", "kind", "group"
// or "tenant"), with at most l.Burst at once (0: a second's worth, at
// least 1); a zero l.Rate removes it. rate.ParseRate reads "5/s",
// "300/m". Workers take a rate's tokens for a whole claim at once and
// give back, using no attempt, the tasks past it, each told when to come
// again, one after another at the rate; they read the rates when they
// start and at every heartbeat. Concurrency limits are apart from rates:
// grit limits set.
func (c *Client) SetRate(ctx context.Context, scope, name string, l rate.Limit) error {
	st, err := c.driver()
	if err != nil {
		return err
	}
	if err := st.SetRate(ctx, store.Rate{RateKey: store.RateKey{Scope: store.Scope(scope), Name: name}, Limit: l}); err != nil {
		return fmt.Errorf("grit: %w", err)
	}
	return nil
}

// Rates returns the rates set, by scope and name, with what each holds
// back now.
func (c *Client) Rates(ctx context.Context) ([]Rate, error) {
	st, err := c.driver()
	if err != nil {
		return nil, err
	}
	rs, err := st.Rates(ctx)
	if err != nil {
		return nil, fmt.Errorf("grit: %w", err)
	}
	now, err := st.Now(ctx)
	if err != nil {
		return nil, fmt.Errorf("grit: %w", err)
	}
	out := make([]Rate, len(rs))
	for i, r := range rs {
		out[i] = Rate{Scope: string(r.Scope), Name: r.Name, Limit: r.Limit, Waiting: r.Waiting(now)}
	}
	return out, nil
}
