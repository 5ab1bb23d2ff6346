package fsm

import (
	"errors"
	"strings"
	"testing"
)

var good = Machine{
	Name: "payment", Initial: "created",
	States:      []State{{Name: "created"}, {Name: "authorized", Kind: "authorize"}},
	Transitions: []Transition{{From: "created", Event: "authorize", To: "authorized"}, {From: "failed", Event: "retry", To: "created"}},
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Machine)
		want string
	}{
		{func(m *Machine) { m.Name = "" }, "name"},
		{func(m *Machine) { m.Initial = "nowhere" }, `initial state "nowhere"`},
		{func(m *Machine) { m.Initial = "authorized" }, "has a kind"},
		{func(m *Machine) { m.States = append(m.States, State{Name: "created"}) }, "declared twice"},
		{func(m *Machine) { m.States = append(m.States, State{Name: "a b"}) }, "not allowed"},
		{func(m *Machine) {
			m.Transitions = append(m.Transitions, Transition{From: "created", Event: "authorize", To: "failed"})
		}, "two transitions"},
		{func(m *Machine) {
			m.Transitions = append(m.Transitions, Transition{From: "created", Event: "x", To: "nowhere"})
		}, `no state "nowhere"`},
		{func(m *Machine) {
			m.Transitions = append(m.Transitions, Transition{From: "created", Event: "", To: "failed"})
		}, "event"},
	} {
		m := good
		m.States = append([]State(nil), good.States...)
		m.Transitions = append([]Transition(nil), good.Transitions...)
		c.edit(&m)
		if err := m.Validate(); err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", m, err, c.want)
		}
	}
}

func TestTargetAndKind(t *testing.T) {
	t.Parallel()
	if to, ok := good.Target("created", "authorize"); !ok || to != "authorized" || good.KindOf(to) != "authorize" {
		t.Errorf("target %q %v", to, ok)
	}
	if _, ok := good.Target("authorized", "authorize"); ok {
		t.Error("a transition from the wrong state")
	}
	if good.FailedState() != DefaultFailed || good.KindOf(DefaultFailed) != "" {
		t.Error("the default failed state")
	}
}

// FuzzValidate: any machine of one transition is valid or an error
// matching ErrInvalid, and a valid one's transition is found.
func FuzzValidate(f *testing.F) {
	f.Add("m", "a", "b", "go", "k")
	f.Add("", "a", "a", "", "")
	f.Add("m", "a b", "failed", "x", "k:1")
	f.Fuzz(func(t *testing.T, name, from, to, event, kind string) {
		m := Machine{Name: name, Initial: from, States: []State{{Name: from}, {Name: to, Kind: kind}}, Transitions: []Transition{{From: from, Event: event, To: to}}}
		err := m.Validate()
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("an error not matching ErrInvalid: %v", err)
			}
			return
		}
		if got, ok := m.Target(from, event); !ok || got != to {
			t.Fatalf("valid machine %+v: target %q %v", m, got, ok)
		}
	})
}
