package grit

import (
	"context"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
)

// SetTenantWeight sets a tenant's weight in fair claims, fleet-wide: among
// due tasks of one priority, workers take tenants in turn, and a tenant of
// weight w takes w tasks to a tenant of weight 1's one (1 to 1000; 1, the
// default, removes the weight; "" is the tasks without a tenant). It
// applies to the tasks that take their turn from then on: those enqueued,
// and those coming due.
func (c *Client) SetTenantWeight(ctx context.Context, tenant string, weight int) error {
	st, err := c.driver()
	if err != nil {
		return err
	}
	w, ok := st.(store.Weigher)
	if !ok {
		return fmt.Errorf("set the weight of tenant %q: the store (%T) keeps no weights: every tenant has weight %d: %w",
			tenant, st, store.DefaultWeight, errors.ErrUnsupported)
	}
	return w.SetWeight(ctx, tenant, weight)
}
