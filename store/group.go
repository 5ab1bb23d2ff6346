package store

import (
	"context"

	"github.com/grit-run/grit/breaker"
)

// GroupBreakers is an optional capability: each group's circuit breaker,
// kept in the store so that every worker of a fleet sees one state, and
// changed under a lock so that they change it one at a time.
type GroupBreakers interface {
	// Circuits returns the circuit of every group that has one.
	Circuits(ctx context.Context) (map[string]breaker.Circuit, error)
	// UpdateCircuit changes a group's circuit with fn, in a transaction of
	// its own, and returns it as fn left it. A group without one starts
	// from the zero Circuit (closed).
	UpdateCircuit(ctx context.Context, group string, fn func(*breaker.Circuit)) (breaker.Circuit, error)
}

// ValidateGroup checks a group's name.
func ValidateGroup(g string) error {
	if g == "" || len(g) > 200 {
		return invalid("group %q: want a name of 1 to 200 characters", g)
	}
	return nil
}
