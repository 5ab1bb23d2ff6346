package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Publish records an event that the handler whose context ctx is publishes:
// it is published when the attempt's success is recorded, in the same
// transaction, and not at all if the attempt does not succeed. Only a
// handler's context can publish this way.
func Publish(ctx context.Context, e task.Event) error {
	rec, ok := ctx.Value(recordKey{}).(*record)
	if !ok {
		return errors.New("engine: publish outside a handler: publish with the client instead")
	}
	if err := store.ValidateEvent(e); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.events = append(rec.events, e)
	return nil
}

// published is what the handler published.
func (r *record) published() []task.Event {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.events {
		if r.events[i].Tenant == "" {
			r.events[i].Tenant = r.tenant // a tenant's task publishes the tenant's events
		}
	}
	return r.events
}
