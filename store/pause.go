package store

import (
	"context"
	"slices"
	"time"
)

// ScopeKind names a kind of task, for a pause.
const ScopeKind Scope = "kind"

// Pause stops the claims of a queue's, a kind's or a tenant's tasks
// across the fleet until it is resumed: the tasks wait where they are,
// using no attempt; attempts already running go on.
type Pause struct {
	Scope Scope     `json:"scope"` // ScopeQueue, ScopeKind or ScopeTenant
	Name  string    `json:"name"`
	Since time.Time `json:"since"` // the store's time of the pause
	Who   string    `json:"who"`   // who paused it, as the audit log names operators
}

// Pauser is an optional capability: the pauses, kept in the store so that
// every worker of a fleet sees them (the gate reads them with the
// groups, at every heartbeat).
type Pauser interface {
	// Pause pauses p.Scope p.Name; pausing what is paused already keeps
	// the first pause (its Since and Who) and is not an error. It returns
	// the pause as the store keeps it.
	Pause(ctx context.Context, p Pause) (Pause, error)
	// Resume ends a pause, and reports whether there was one.
	Resume(ctx context.Context, scope Scope, name string) (bool, error)
	// Pauses lists the pauses, by scope, then name.
	Pauses(ctx context.Context) ([]Pause, error)
}

// PauseWatcher is an optional capability: a channel that receives a value
// after each pause or resume has committed, so that a worker learns of a
// pause at once, not at its next heartbeat, and starts none of the paused
// tasks it claimed before it (see docs/fleet.md, Pause). Values do not
// queue up: one stands for any number of changes, and the watcher reads
// the pauses again. The channel is closed when ctx ends or the store
// closes. A driver says whose pauses it sees: its own handle's, or (as
// PostgreSQL's LISTEN/NOTIFY) those of every process. Either way a claim
// made after a pause committed takes none of its tasks: the drivers' claims
// read the pauses themselves.
type PauseWatcher interface {
	WatchPauses(ctx context.Context) (<-chan struct{}, error)
}

// PauseScopes are the scopes a pause can have.
var PauseScopes = []Scope{ScopeQueue, ScopeKind, ScopeTenant}

// ValidatePause checks a pause's scope and name.
func ValidatePause(scope Scope, name string) error {
	switch {
	case !slices.Contains(PauseScopes, scope):
		return invalid("pause scope %q: want queue, kind or tenant", scope)
	case name == "" || len(name) > 200:
		return invalid("pause of %s %q: want a name of 1 to 200 characters", scope, name)
	}
	return nil
}
