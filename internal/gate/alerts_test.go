package gate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// alerting is a fixture whose gate hands its alerts to a channel, with
// the retry policy pol for what the gate decides (a rescue).
func alerting(t *testing.T, c claimer, p gate.Protection, pol func(task.Task) retry.Policy) (*fixture, chan alert.Event) {
	t.Helper()
	f := setup(t, c, p)
	alerts := make(chan alert.Event, 100)
	g, err := gate.New(gate.Config{Store: f.st, Protection: p, Clock: f.clock, Policy: pol, Alert: func(ev alert.Event) { alerts <- ev }})
	if err != nil {
		t.Fatal(err)
	}
	f.g = g
	return f, alerts
}

func none(t *testing.T, alerts chan alert.Event, when string) {
	t.Helper()
	select {
	case ev := <-alerts:
		t.Errorf("%s: alert %+v, want none", when, ev)
	default:
	}
}

func one(t *testing.T, alerts chan alert.Event, when string) alert.Event {
	t.Helper()
	select {
	case ev := <-alerts:
		none(t, alerts, when+", after the first")
		return ev
	default:
		t.Fatalf("%s: no alert", when)
		return alert.Event{}
	}
}

// deadLetter records ts DEAD_LETTER, as a claimer does, and returns the
// store's answer to each as the claimer tells the gate.
func (f *fixture) deadLetter(ts []task.Task) []gate.End {
	f.t.Helper()
	fs := make([]store.Finish, len(ts))
	for i, t := range ts {
		fs[i] = gate.BaseFinish(t)
		fs[i].State, fs[i].Error, fs[i].Fingerprint, fs[i].Streak = task.DeadLetter, "charge: no such card", "fp-card", 2
		fs[i].Attempt.Outcome = task.OutcomeError
	}
	errs, err := f.st.Finish(context.Background(), fs)
	if err != nil {
		f.t.Fatal(err)
	}
	ends := make([]gate.End, len(ts))
	for i := range ts {
		ends[i] = gate.End{Task: &ts[i], Finish: &fs[i], Err: errs[i]}
	}
	return ends
}

// A dead letter the store recorded alerts, once, whichever claimer
// reports it; one it refused (the lease was lost) or that was never
// recorded (abandoned at a stop) does not.
func TestDeadLetterAlertsOnceRecorded(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		f, alerts := alerting(t, c, gate.Protection{}, nil)
		f.enqueue(3, task.NewTask{Queue: "billing", Group: "payments", Tenant: "acme"})
		ts := f.claim(3).Tasks
		if len(ts) != 3 {
			t.Fatalf("claimed %d", len(ts))
		}
		f.g.Ended(context.Background(), "w", f.deadLetter(ts[:1]))
		ev := one(t, alerts, "a recorded dead letter")
		if ev.Type != alert.DeadLetter || ev.TaskID != ts[0].ID || ev.Kind != "call" || ev.Queue != "billing" || ev.Group != "payments" ||
			ev.Tenant != "acme" || ev.Attempt != 1 || ev.Fingerprint != "fp-card" || ev.Error != "charge: no such card" || !ev.Time.Equal(t0) {
			t.Errorf("alert %+v", ev)
		}
		// The same finish again: the store refuses it (the lease is gone).
		again := f.deadLetter(ts[:1])
		if !errors.Is(again[0].Err, task.ErrLeaseLost) {
			t.Fatalf("a second finish: %v", again[0].Err)
		}
		abandoned := gate.End{Task: &ts[1], Finish: &store.Finish{TaskID: ts[1].ID, Token: ts[1].LeaseToken, State: task.DeadLetter}, Err: errors.New("abandoned at stop")}
		failed := gate.BaseFinish(ts[2])
		failed.State, failed.Attempt.Outcome, failed.Attempt.Class = task.Failed, task.OutcomeError, retry.ClassPermanent.String()
		if errs, err := f.st.Finish(context.Background(), []store.Finish{failed}); err != nil || errs[0] != nil {
			t.Fatal(err, errs)
		}
		f.g.Ended(context.Background(), "w", []gate.End{again[0], abandoned, {Task: &ts[2], Finish: &failed}})
		none(t, alerts, "a refused dead letter, an abandoned one and a FAILED task")
	})
}

// A breaker that opens from closed alerts once, whoever's results open
// it; results that find it open already, and its opening again after a
// failed probe, do not.
func TestBreakerOpenedAlerts(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, c claimer) {
		s := breaker.Settings{Consecutive: 2, CoolDown: 10 * time.Second, Probes: 1}
		f, alerts := alerting(t, c, gate.Protection{Breaker: s}, nil)
		f.enqueue(4, task.NewTask{Group: "api"})
		ts := f.claim(4).Tasks
		if len(ts) != 4 {
			t.Fatalf("claimed %d", len(ts))
		}
		f.end(ts[:1], false, retry.Unclassified)
		none(t, alerts, "one failure of two")
		f.end(ts[1:2], false, retry.ClassTransient)
		ev := one(t, alerts, "the breaker opened")
		if ev.Type != alert.BreakerOpened || ev.Group != "api" || !ev.Time.Equal(t0) || !ev.Until.Equal(t0.Add(10*time.Second)) || ev.TaskID != 0 {
			t.Errorf("alert %+v", ev)
		}
		f.end(ts[2:], false, retry.ClassTransient)
		none(t, alerts, "failures while it is open")
		f.clock.Advance(10 * time.Second)
		probe := f.claim(4).Tasks
		if len(probe) != 1 {
			t.Fatalf("after the cool-down: claimed %d, want a probe", len(probe))
		}
		f.end(probe, false, retry.ClassTransient)
		if g := f.g.Groups()["api"]; g.Circuit.State != breaker.Open || g.Circuit.Opens != 2 {
			t.Fatalf("after a failed probe: %+v", g.Circuit)
		}
		none(t, alerts, "opening again after a failed probe")
	})
}

// A rescue whose decision is DEAD_LETTER (a policy's interrupted rule
// says so) alerts, as a claimer's does.
func TestRescueDeadLetterAlerts(t *testing.T) {
	t.Parallel()
	poison := func(task.Task) retry.Policy {
		return retry.Policy{OnInterrupted: func(_ retry.Attempt, d retry.Decision) retry.Decision { return d.Stop(retry.ReasonPoison) }}
	}
	f, alerts := alerting(t, claimers[0], gate.Protection{}, poison)
	f.enqueue(1, task.NewTask{})
	ts := f.claim(1).Tasks
	f.clock.Advance(2 * time.Minute) // past the lease
	if err := f.g.Rescue(context.Background(), store.RescueRequest{Worker: "rescuer", Lease: time.Minute}, nil); err != nil {
		t.Fatal(err)
	}
	ev := one(t, alerts, "a rescue to DEAD_LETTER")
	if ev.Type != alert.DeadLetter || ev.TaskID != ts[0].ID {
		t.Errorf("alert %+v", ev)
	}
	if got, _ := f.st.GetTask(context.Background(), ts[0].ID); got.State != task.DeadLetter {
		t.Errorf("task %s", got.State)
	}
}

// HeldOutage is the outage detector's way to alert: it raises one
// OutageHeld alert, at the store's time, for a kind or a group.
func TestHeldOutageAlerts(t *testing.T) {
	t.Parallel()
	f, alerts := alerting(t, claimers[0], gate.Protection{}, nil)
	f.g.HeldOutage(gate.Outage{Kind: "send", Fingerprint: "fp-smtp", Error: "smtp: 421 try later", Tasks: 30, Until: t0.Add(time.Minute)})
	ev := one(t, alerts, "an outage held")
	if ev.Type != alert.OutageHeld || ev.Kind != "send" || ev.Group != "" || ev.Tasks != 30 || ev.Fingerprint != "fp-smtp" ||
		ev.Error != "smtp: 421 try later" || !ev.Until.Equal(t0.Add(time.Minute)) || !ev.Time.Equal(t0) {
		t.Errorf("alert %+v", ev)
	}
	f.g.HeldOutage(gate.Outage{Group: "smtp", Tasks: 12})
	if ev := one(t, alerts, "a group held"); ev.Group != "smtp" || ev.Kind != "" {
		t.Errorf("alert %+v", ev)
	}
}
