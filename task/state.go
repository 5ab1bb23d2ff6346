package task

import "fmt"

// State is where a task is in its life. States are spelled exactly so, in
// upper case, in the database, the CLI, JSON and the API.
type State string

const (
	// Pending waits for the tasks it needs.
	Pending State = "PENDING"
	// Ready can be claimed now (or at NextAt, when that is set).
	Ready State = "READY"
	// Running is held by a worker's lease.
	Running State = "RUNNING"
	// Retrying failed and waits for NextAt to be tried again.
	Retrying State = "RETRYING"
	// Sensing snoozed (a sensor not ready yet) and waits for NextAt, without
	// using an attempt.
	Sensing State = "SENSING"
	// Success ended well.
	Success State = "SUCCESS"
	// Failed failed for good: a permanent error or its attempts used up.
	Failed State = "FAILED"
	// UpstreamFailed will never run: a task it needs failed.
	UpstreamFailed State = "UPSTREAM_FAILED"
	// DeadLetter failed the same way twice in a row (poison). Its dependents
	// wait until an operator replays, skips or fails it.
	DeadLetter State = "DEAD_LETTER"
	// Skipped is a dead letter an operator let pass: a permitted failure,
	// after which its dependents go on.
	Skipped State = "SKIPPED"
	// Cancelled was cancelled before it could end.
	Cancelled State = "CANCELLED"
)

// States lists every state, in the order of the state machine.
var States = []State{Pending, Ready, Running, Retrying, Sensing, Success, Failed, UpstreamFailed, DeadLetter, Skipped, Cancelled}

// Terminal reports whether a task in state s will never change again on its
// own. DEAD_LETTER is not terminal: an operator acts on it.
func (s State) Terminal() bool {
	switch s {
	case Success, Failed, UpstreamFailed, Skipped, Cancelled:
		return true
	}
	return false
}

// Waiting reports whether s waits for a time (NextAt) or a claim.
func (s State) Waiting() bool { return s == Ready || s == Retrying || s == Sensing }

// Satisfies reports whether a task in state s lets the tasks that need it
// go on.
func (s State) Satisfies() bool { return s == Success || s == Skipped }

// Valid reports whether s is one of the States.
func (s State) Valid() bool {
	for _, v := range States {
		if s == v {
			return true
		}
	}
	return false
}

// ParseState reads a state, in any case.
func ParseState(s string) (State, error) {
	for _, v := range States {
		if equalFold(string(v), s) {
			return v, nil
		}
	}
	return "", fmt.Errorf("task: unknown state %q (want one of %v)", s, States)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
