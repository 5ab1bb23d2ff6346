package gate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// failAlike fails each claimed task with err, decided as every claimer
// decides (decide.Failure) and told to the gate before it is recorded
// (Ending), as each claimer does; it returns the recorded finishes.
func (f *fixture) failAlike(ts []task.Task, err error) []store.Finish {
	f.t.Helper()
	now := f.clock.Now()
	fs := make([]store.Finish, len(ts))
	ends := make([]gate.End, len(ts))
	for i := range ts {
		fs[i] = gate.BaseFinish(ts[i])
		fs[i].Attempt.StartedAt, fs[i].Attempt.EndedAt = now, now
		decide.Failure(&fs[i], ts[i], err, retry.Policy{MaxAttempts: 11}, now)
		f.g.Ending(context.Background(), &ts[i], &fs[i])
	}
	errs, ferr := f.st.Finish(context.Background(), fs)
	if ferr != nil {
		f.t.Fatal(ferr)
	}
	for i := range ts {
		ends[i] = gate.End{Task: &ts[i], Finish: &fs[i], Err: errs[i]}
	}
	f.g.Ended(context.Background(), "w", ends)
	return fs
}

// An outage, for both claimers: tasks of a kind fail alike and none
// succeeds; at their second identical failure, which would be poison,
// they are retried instead and the kind is held: its tasks are given back
// without an attempt until the hold's probe, whose success releases it.
func TestOutageHoldsTheKind(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f := setup(t, c, gate.Protection{Breaker: breaker.Settings{CoolDown: time.Minute, Probes: 1}})
		f.enqueue(6, task.NewTask{})
		boom := errors.New("ledger row 42 is locked")
		f.failAlike(f.claim(6).Tasks, boom) // first failures: retried
		f.clock.Advance(2 * time.Second)
		cl := f.claim(6)
		if len(cl.Tasks) != 6 {
			t.Fatalf("claimed %d retries, want 6", len(cl.Tasks))
		}
		got := f.failAlike(cl.Tasks, boom)
		for _, fin := range got {
			if fin.State != task.Retrying || fin.Attempt.Decision != "outage" {
				t.Fatalf("a second identical failure of 6 tasks, none succeeding: %s (%s), want RETRYING as an outage", fin.State, fin.Attempt.Decision)
			}
		}
		gs, _ := f.st.Groups(context.Background())
		hold := gs["kind:call"]
		if hold.Outage == nil || hold.Circuit.State != breaker.Open {
			t.Fatalf("kind:call %+v, want held open with its outage", hold)
		}
		// Due again at the probe: one probe goes, the rest are given back.
		f.clock.Advance(time.Minute + time.Second)
		cl = f.claim(6)
		if len(cl.Tasks) != 1 || len(cl.Back) != 5 {
			t.Fatalf("after the cool-down: %d claimed, %d given back; want one probe, five back", len(cl.Tasks), len(cl.Back))
		}
		for _, b := range cl.Back {
			if !b.Finish.Refund {
				t.Errorf("task %d given back using an attempt", b.Task.ID)
			}
		}
		f.end(cl.Tasks, true, retry.Unclassified)
		gs, _ = f.st.Groups(context.Background())
		if hold := gs["kind:call"]; hold.Outage != nil || hold.Circuit.State == breaker.Open {
			t.Errorf("kind:call after its probe succeeded: %+v, want released", hold)
		}
	})
}

// Poison, for both claimers: tasks that fail the same way twice while
// others of their kind succeed are dead-lettered, however many of them.
func TestPoisonAmongSuccessesIsDeadLettered(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f := setup(t, c, gate.Protection{})
		f.enqueue(5, task.NewTask{})
		f.end(f.claim(5).Tasks, true, retry.Unclassified)
		f.enqueue(6, task.NewTask{})
		boom := errors.New("cannot parse row 17")
		f.failAlike(f.claim(6).Tasks, boom)
		f.clock.Advance(2 * time.Second)
		cl := f.claim(6)
		if len(cl.Tasks) != 6 {
			t.Fatalf("claimed %d retries, want 6", len(cl.Tasks))
		}
		for _, fin := range f.failAlike(cl.Tasks, boom) {
			if fin.State != task.DeadLetter {
				t.Errorf("a task failing alike twice while others of its kind succeed: %s (%s), want DEAD_LETTER", fin.State, fin.Attempt.Decision)
			}
		}
	})
}

// A long outage: a probe that fails the same way after a cool-down longer
// than the outage window is still the outage, not poison; and tasks given
// back while the hold's cool-down grows come back within its first one.
func TestALongOutageKeepsItsProbes(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f := setup(t, c, gate.Protection{Breaker: breaker.Settings{CoolDown: 2 * time.Minute, MaxCoolDown: time.Hour, Probes: 1}})
		f.enqueue(6, task.NewTask{})
		boom := errors.New("ledger row 42 is locked")
		f.failAlike(f.claim(6).Tasks, boom)
		f.clock.Advance(2 * time.Second)
		f.failAlike(f.claim(6).Tasks, boom) // the outage is declared
		for round := range 3 {
			f.clock.Advance(10 * time.Minute) // past any cool-down so far, and the window
			cl := f.claim(6)
			if len(cl.Tasks) != 1 {
				t.Fatalf("round %d: %d probes, want 1", round, len(cl.Tasks))
			}
			for _, b := range cl.Back {
				if wait := b.Finish.NextAt.Sub(f.clock.Now()); wait > 2*time.Minute {
					t.Errorf("round %d: task %d given back for %v, want at most the first cool-down (2m)", round, b.Task.ID, wait)
				}
			}
			if got := f.failAlike(cl.Tasks, boom)[0]; got.State != task.Retrying || got.Attempt.Decision != "outage" {
				t.Fatalf("round %d: the probe failing alike: %s (%s), want RETRYING as the outage", round, got.State, got.Attempt.Decision)
			}
		}
	})
}

// The first to fail twice: a task whose second failure came before the
// failure had spread (a dead letter, as poison) is replayed when the
// outage is declared, and waits in the hold with the others.
func TestAnOutageReplaysItsEarlyDeadLetters(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f := setup(t, c, gate.Protection{Breaker: breaker.Settings{CoolDown: time.Minute}})
		boom := errors.New("ledger row 42 is locked")
		first := f.enqueue(1, task.NewTask{})[0]
		f.failAlike(f.claim(1).Tasks, boom)
		f.clock.Advance(2 * time.Second)
		if got := f.failAlike(f.claim(1).Tasks, boom)[0]; got.State != task.DeadLetter {
			t.Fatalf("one task failing alike twice, alone: %s, want DEAD_LETTER", got.State)
		}
		f.enqueue(5, task.NewTask{})
		f.failAlike(f.claim(5).Tasks, boom)
		f.clock.Advance(2 * time.Second)
		cl := f.claim(5)
		if len(cl.Tasks) != 5 {
			t.Fatalf("claimed %d retries, want 5", len(cl.Tasks))
		}
		for _, fin := range f.failAlike(cl.Tasks, boom) {
			if fin.Attempt.Decision != "outage" {
				t.Fatalf("six tasks failing alike: %s (%s), want an outage", fin.State, fin.Attempt.Decision)
			}
		}
		got, err := f.st.GetTask(context.Background(), first)
		if err != nil || got.State != task.Ready {
			t.Errorf("the early dead letter after the outage was declared: %s (%v), want READY (replayed)", got.State, err)
		}
	})
}
