package machine

import (
	"testing"
	"time"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/task"
)

var m = fsm.Machine{
	Name: "door", Initial: "closed",
	States: []fsm.State{{Name: "closed"}, {Name: "open", Kind: "open_door"}, {Name: "locked"}},
	Transitions: []fsm.Transition{
		{From: "closed", Event: "open", To: "open"}, {From: "open", Event: "close", To: "closed"},
		{From: "closed", Event: "lock", To: "locked"},
	},
}

func TestAdvance(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	in := fsm.Instance{State: "closed"}
	send(&in, "lock", nil, now) // no handler: entered at once
	send(&in, "open", nil, now) // no transition from locked
	if e := advance(&in, m, "", now); e != nil || in.State != "locked" || len(in.History) != 2 || in.History[1].Outcome != fsm.Ignored {
		t.Fatalf("%+v", in)
	}
	in = fsm.Instance{State: "closed"}
	send(&in, "open", nil, now)
	send(&in, "close", nil, now)
	e := advance(&in, m, "", now)
	if e == nil || e.To != "open" || len(in.Queue) != 1 || due(&in, now) != now.Add(Watch) {
		t.Fatalf("entering: %+v", in)
	}
	e.Task = 7
	for _, st := range []task.State{task.Running, task.Retrying} {
		if advance(&in, m, st, now) != nil || in.Entering == nil {
			t.Fatalf("moved on while its task is %s", st)
		}
	}
	if advance(&in, m, task.DeadLetter, now); !in.Held {
		t.Fatal("a dead letter does not hold the instance")
	}
	if advance(&in, m, task.Success, now); in.State != "closed" || in.Entering != nil || in.Held || len(in.Queue) != 0 {
		t.Fatalf("after the success: %+v", in)
	}
	send(&in, "open", nil, now)
	advance(&in, m, "", now).Task = 8
	if advance(&in, m, task.Failed, now); in.State != fsm.DefaultFailed || in.History[len(in.History)-1].Outcome != fsm.Failed {
		t.Fatalf("after the failure: %+v", in)
	}
}

func TestKeyRoundTrip(t *testing.T) {
	t.Parallel()
	m, k, seq, ok := ParseKey(Key("payment", "order:42", 7))
	if !ok || m != "payment" || k != "order:42" || seq != 7 {
		t.Errorf("%q %q %d %v", m, k, seq, ok)
	}
	for _, bad := range []string{"", "fsm:", "fsm:m", "fsm:m:k", "fsm:m:k:x", "fsm:m::0", "other:m:k:1"} {
		if _, _, _, ok := ParseKey(bad); ok {
			t.Errorf("ParseKey(%q) read it", bad)
		}
	}
}
