package grit_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// payment is the machine of the tests: created -> authorized ->
// captured -> refunded, and failed when a state's handler fails for good.
var payment = fsm.Machine{
	Name: "payment", Initial: "created",
	States: []fsm.State{{Name: "created"}, {Name: "authorized", Kind: "authorize"}, {Name: "captured", Kind: "capture"}, {Name: "refunded", Kind: "refund"}},
	Transitions: []fsm.Transition{
		{From: "created", Event: "authorize", To: "authorized"},
		{From: "authorized", Event: "capture", To: "captured"},
		{From: "captured", Event: "refund", To: "refunded"},
	},
}

func waitInstance(t *testing.T, c *grit.Client, key string, ok func(fsm.Instance) bool) fsm.Instance {
	t.Helper()
	var in fsm.Instance
	var err error
	poll.UntilSays(t, 30*time.Second, func() string { return fmt.Sprintf("instance %s is %+v (%v)", key, in, err) }, func() bool {
		in, err = c.Instance(context.Background(), "payment", key)
		return err == nil && ok(in)
	})
	return in
}

func outcomes(in fsm.Instance) string {
	var s []string
	for _, h := range in.History {
		s = append(s, fmt.Sprintf("%s:%s->%s:%s", h.Event, h.From, h.To, h.Outcome))
	}
	return fmt.Sprint(s)
}

// TestPaymentMachine: a payment's authorize state fails transiently
// twice and is retried within the same execution (one task, three
// attempts, the instance held in its transition), and its capture is a
// durable-step handler that resumes after its first step.
func TestPaymentMachine(t *testing.T) {
	t.Parallel()
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := openDSN(t, dsn(t), grit.Config{Machines: []fsm.Machine{payment}})
			var authorizations, charges atomic.Int64
			grit.Handle(c, "authorize", func(ctx context.Context, in fsm.Input) error {
				if authorizations.Add(1) <= 2 {
					return retry.Transient(errors.New("bank: connection reset"))
				}
				return nil
			}, grit.HandlerConfig{Policy: "5 10ms 10ms"})
			grit.Handle(c, "capture", func(ctx context.Context, in fsm.Input) error {
				if _, err := grit.Step(ctx, "charge", func(context.Context) (int64, error) { return charges.Add(1), nil }); err != nil {
					return err
				}
				if a, _ := grit.AttemptFrom(ctx); a.Number == 1 {
					return retry.Transient(errors.New("ledger: timeout"))
				}
				return nil
			}, grit.HandlerConfig{Policy: "5 10ms 10ms"})
			grit.Handle(c, "refund", func(context.Context, fsm.Input) error { return nil }, grit.HandlerConfig{})
			ctx := context.Background()
			for _, ev := range []string{"authorize", "capture"} {
				if _, err := c.Send(ctx, "payment", "o-1", ev, map[string]int{"cents": 1250}); err != nil {
					t.Fatal(err)
				}
			}
			startClient(t, c)
			in := waitInstance(t, c, "o-1", func(in fsm.Instance) bool { return in.State == "captured" })
			if got, want := outcomes(in), "[authorize:created->authorized:ENTERED capture:authorized->captured:ENTERED]"; got != want {
				t.Errorf("history %s, want %s", got, want)
			}
			auth := getTask(t, c, in.History[0].Task)
			if auth.Attempt != 3 || auth.State != task.Success || authorizations.Load() != 3 {
				t.Errorf("authorize: task %d attempts %d (%s), ran %d times: want one task of 3 attempts", auth.ID, auth.Attempt, auth.State, authorizations.Load())
			}
			if capture := getTask(t, c, in.History[1].Task); capture.Attempt != 2 || charges.Load() != 1 {
				t.Errorf("capture: %d attempts, charged %d times: want 2 attempts, one charge", capture.Attempt, charges.Load())
			}
			if n := len(kindTasks(t, c, "authorize")); n != 1 {
				t.Errorf("%d authorize tasks, want 1: retries stay in the execution", n)
			}
		})
	}
}

// TestMachineFailureNextAndDeadLetter: a state that fails for good takes
// its instance to failed (later events are ignored); Next is delivered
// before events sent meanwhile; a dead-lettered state holds its instance
// until an operator replays it.
func TestMachineFailureNextAndDeadLetter(t *testing.T) {
	t.Parallel()
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := openDSN(t, dsn(t), grit.Config{Machines: []fsm.Machine{payment}})
			var poisonUntil atomic.Bool
			poisonUntil.Store(true)
			grit.Handle(c, "authorize", func(ctx context.Context, in fsm.Input) error {
				switch in.Key {
				case "declined":
					return retry.Permanent(errors.New("card declined"))
				case "next":
					return grit.Next(ctx, "capture", nil)
				case "poison":
					if poisonUntil.Load() {
						return errors.New("KeyError: order")
					}
				}
				return nil
			}, grit.HandlerConfig{Policy: "5 10ms 10ms"})
			grit.Handle(c, "capture", func(context.Context, fsm.Input) error { return nil }, grit.HandlerConfig{})
			grit.Handle(c, "refund", func(context.Context, fsm.Input) error { return nil }, grit.HandlerConfig{})
			ctx := context.Background()
			send := func(key string, evs ...string) {
				for _, ev := range evs {
					if _, err := c.Send(ctx, "payment", key, ev, nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			send("declined", "authorize", "capture")
			send("next", "authorize", "refund")
			send("poison", "authorize", "capture")
			startClient(t, c)

			in := waitInstance(t, c, "declined", func(in fsm.Instance) bool { return len(in.History) == 2 })
			if got, want := outcomes(in), "[authorize:created->failed:FAILED capture:failed->:IGNORED]"; in.State != "failed" || got != want {
				t.Errorf("declined: state %s, history %s, want failed and %s", in.State, got, want)
			}
			// Next goes before the refund sent meanwhile: the refund then
			// finds the payment captured.
			in = waitInstance(t, c, "next", func(in fsm.Instance) bool { return in.State == "refunded" })
			if got, want := outcomes(in), "[authorize:created->authorized:ENTERED capture:authorized->captured:ENTERED refund:captured->refunded:ENTERED]"; got != want {
				t.Errorf("next: history %s, want %s", got, want)
			}
			in = waitInstance(t, c, "poison", func(in fsm.Instance) bool { return in.Held })
			if in.State != "created" || len(in.Queue) != 1 || in.Entering == nil {
				t.Errorf("a dead-lettered state: %+v, want held entering authorized with capture waiting", in)
			}
			poisonUntil.Store(false)
			if _, err := c.Act(ctx, in.Entering.Task, task.ActReplay); err != nil {
				t.Fatal(err)
			}
			in = waitInstance(t, c, "poison", func(in fsm.Instance) bool { return in.State == "captured" })
			if in.Held {
				t.Errorf("still held after the replay: %+v", in)
			}
		})
	}
}

func getTask(t *testing.T, c *grit.Client, id int64) task.Task {
	t.Helper()
	tk, err := c.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func kindTasks(t *testing.T, c *grit.Client, kind string) []task.Task {
	t.Helper()
	ts, err := c.Tasks(context.Background(), task.Filter{Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
