// Package fsm declares state machines: named states, each run by a
// handler (a kind), and transitions from state to state on events. An
// instance of a machine, named by a key, takes its events one at a time,
// in the order they were sent: on an event, it enters the transition's
// target state by running that state's handler (a task of its kind) with
// the event; the next event waits until the handler has finished. A
// handler that fails is retried by its own policy, the instance held in
// its transition; one that fails for good takes the instance to the
// machine's Failed state; one dead-lettered holds the instance for an
// operator. docs/fsm.md tells the whole story.
package fsm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// ErrInvalid is matched by the error of a machine that cannot run.
var ErrInvalid = errors.New("fsm: invalid machine")

// DefaultFailed is the state an instance goes to when a state's handler
// fails for good, when the machine names none.
const DefaultFailed = "failed"

// Machine is a state machine.
type Machine struct {
	// Name names the machine in the store, the API and the CLI.
	Name string
	// Initial is the state of a new instance.
	Initial string
	// States are the machine's states. A state with a Kind runs a task of
	// that kind when an instance enters it; one without is entered at once.
	States []State
	// Transitions say which event takes an instance from which state to
	// which.
	Transitions []Transition
	// Failed is the state an instance goes to when the handler of a state
	// it was entering fails for good (FAILED, or CANCELLED); default
	// "failed", a state without a kind unless States has it.
	Failed string
}

// State is one state of a machine.
type State struct {
	Name string
	// Kind is the handler run when an instance enters the state, with an
	// Input; "" for none.
	Kind string
}

// Transition takes an instance in From to To on Event.
type Transition struct {
	From, Event, To string
}

// Input is the args of the task that enters a state: which instance,
// which event took it there, from where.
type Input struct {
	Machine string          `json:"machine"`
	Key     string          `json:"key"`
	Seq     int64           `json:"seq"` // the event's number in the instance, from 1
	Event   string          `json:"event"`
	From    string          `json:"from"`
	To      string          `json:"to"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// FailedState is the machine's Failed state, or DefaultFailed.
func (m Machine) FailedState() string {
	if m.Failed == "" {
		return DefaultFailed
	}
	return m.Failed
}

// Target is the state event takes an instance in from to.
func (m Machine) Target(from, event string) (string, bool) {
	for _, t := range m.Transitions {
		if t.From == from && t.Event == event {
			return t.To, true
		}
	}
	return "", false
}

// KindOf is the kind of state's handler; "" for none.
func (m Machine) KindOf(state string) string {
	for _, s := range m.States {
		if s.Name == state {
			return s.Kind
		}
	}
	return ""
}

func (m Machine) has(state string) bool {
	if state == m.FailedState() {
		return true
	}
	for _, s := range m.States {
		if s.Name == state {
			return true
		}
	}
	return false
}

// Validate says what is wrong with m, as an error matching ErrInvalid.
func (m Machine) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: machine %q: %s", ErrInvalid, m.Name, fmt.Sprintf(format, args...))
	}
	if p := nameProblem(m.Name); p != "" {
		return bad("name: %s", p)
	}
	seen := map[string]bool{}
	for _, s := range m.States {
		if p := nameProblem(s.Name); p != "" {
			return bad("state %q: %s", s.Name, p)
		}
		if seen[s.Name] {
			return bad("state %q is declared twice", s.Name)
		}
		seen[s.Name] = true
		if s.Kind != "" && nameProblem(s.Kind) != "" {
			return bad("state %q: kind %q: %s", s.Name, s.Kind, nameProblem(s.Kind))
		}
	}
	if !m.has(m.Initial) {
		return bad("initial state %q is not one of its states", m.Initial)
	}
	if m.KindOf(m.Initial) != "" {
		return bad("initial state %q has a kind: an instance is made in it without running anything; give the kind to a state an event leads to", m.Initial)
	}
	pairs := map[[2]string]bool{}
	for _, t := range m.Transitions {
		switch {
		case !m.has(t.From):
			return bad("transition %s --%s--> %s: no state %q", t.From, t.Event, t.To, t.From)
		case !m.has(t.To):
			return bad("transition %s --%s--> %s: no state %q", t.From, t.Event, t.To, t.To)
		case nameProblem(t.Event) != "":
			return bad("transition from %q: event %q: %s", t.From, t.Event, nameProblem(t.Event))
		case pairs[[2]string{t.From, t.Event}]:
			return bad("two transitions from %q on %q: an event takes an instance to one state", t.From, t.Event)
		}
		pairs[[2]string{t.From, t.Event}] = true
	}
	return nil
}

// nameProblem says what is wrong with a name of a machine, state, event
// or kind, or "".
func nameProblem(name string) string {
	if name == "" || len(name) > 200 {
		return "want a name of 1 to 200 characters"
	}
	for _, r := range name {
		if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))) && !strings.ContainsRune("-_.", r) {
			return fmt.Sprintf("%q is not allowed: use letters, digits and - _ .", r)
		}
	}
	return ""
}
