package grit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/internal/machine"
)

// Send sends event, with payload as its JSON, to instance key of machine
// (made in the machine's initial state when it is not there). Events of
// an instance are delivered one at a time, in the order sent: this one
// after those sent before it. On a client that has the machine
// (Config.Machines) the instance moves on at once; otherwise a worker
// that has it delivers the event within a second.
func (c *Client) Send(ctx context.Context, machineName, key, event string, payload any) (fsm.Instance, error) {
	if _, err := c.driver(); err != nil {
		return fsm.Instance{}, err
	}
	var raw json.RawMessage
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return fsm.Instance{}, fmt.Errorf("grit: send %s to %s/%s: the payload does not encode as JSON: %w", event, machineName, key, err)
		}
		raw = b
	}
	now, err := c.store.Now(ctx)
	if err != nil {
		return fsm.Instance{}, err
	}
	var m *fsm.Machine
	if def, ok := c.machines[machineName]; ok {
		m = &def
	}
	in, err := machine.Send(ctx, c.store, m, machineName, key, event, raw, now)
	if err != nil {
		return fsm.Instance{}, fmt.Errorf("grit: %w", err)
	}
	return in, nil
}

// Instance returns instance key of machine, or an error matching
// task.ErrNotFound.
func (c *Client) Instance(ctx context.Context, machineName, key string) (fsm.Instance, error) {
	if _, err := c.driver(); err != nil {
		return fsm.Instance{}, err
	}
	in, _, err := machine.Get(ctx, c.store, machineName, key)
	return in, err
}

// Next asks, from the handler of a state an instance is entering, for
// event (with payload as its JSON) to be delivered to the instance first,
// before any other waiting, once the handler has succeeded: the handler
// moves its instance on (FTL's Next). A handler that fails does not.
func Next(ctx context.Context, event string, payload any) error {
	var raw json.RawMessage
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return fmt.Errorf("grit: next %s: the payload does not encode as JSON: %w", event, err)
		}
		raw = b
	}
	return engine.Next(ctx, event, raw)
}
