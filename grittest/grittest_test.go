package grittest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/grittest"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

type Order struct {
	ID    string `json:"id"`
	Cents int    `json:"cents"`
}

type Receipt struct {
	Order string `json:"order"`
}

type Approval struct {
	By string `json:"by"`
}

// handle registers fn for kind on c, failing the test if it cannot.
func handle[A any](t *testing.T, c *grittest.Client, kind string, fn func(context.Context, A) error, cfg grit.HandlerConfig) {
	t.Helper()
	if err := grit.Handle(c.Client, kind, fn, cfg); err != nil {
		t.Fatal(err)
	}
}

func TestWorkSucceeds(t *testing.T) {
	t.Parallel()
	c := grittest.NewClient(t, grit.Config{})
	var got Order
	handle(t, c, "charge", func(_ context.Context, o Order) error { got = o; return nil }, grit.HandlerConfig{})
	r := c.Work(t, "charge", Order{ID: "o-1", Cents: 500})
	if r.Task.State != task.Success || r.Attempt.Outcome != task.OutcomeSuccess || r.Attempt.Number != 1 {
		t.Fatalf("task %s, attempt %d %s: want SUCCESS on the first attempt", r.Task.State, r.Attempt.Number, r.Attempt.Outcome)
	}
	if got != (Order{ID: "o-1", Cents: 500}) {
		t.Errorf("the handler got %+v", got)
	}
}

// TestRetryThenSuccess: a transient failure leaves the task RETRYING with
// its error and its retry's time; it is not due before the clock passes
// that time, and after, its second attempt succeeds.
func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	c := grittest.NewClient(t, grit.Config{})
	var calls atomic.Int32
	handle(t, c, "charge", func(context.Context, Order) error {
		if calls.Add(1) == 1 {
			return retry.Transient(errors.New("payments: 503"))
		}
		return nil
	}, grit.HandlerConfig{Policy: "3 10s"})
	r := c.Work(t, "charge", Order{ID: "o-2"})
	if r.Task.State != task.Retrying || !strings.Contains(r.Task.LastError, "payments: 503") || r.Attempt.Outcome != task.OutcomeError {
		t.Fatalf("after a transient failure: task %s (error %q), attempt %s: want RETRYING with the error", r.Task.State, r.Task.LastError, r.Attempt.Outcome)
	}
	if !r.Task.NextAt.After(c.Now()) {
		t.Fatalf("the retry is due at %v, not after the test's clock %v", r.Task.NextAt, c.Now())
	}
	msg := fatalOf(t, func(tb testing.TB) { c.WorkTask(tb, r.Task.ID) })
	if !strings.Contains(msg, "RETRYING until") || !strings.Contains(msg, "c.Advance(") {
		t.Errorf("working a retry before its time failed with %q: want when it is due and what to do", msg)
	}
	c.AdvanceTo(r.Task.NextAt)
	r = c.WorkTask(t, r.Task.ID)
	if r.Task.State != task.Success || r.Attempt.Number != 2 || calls.Load() != 2 {
		t.Fatalf("after the clock passed the backoff: task %s on attempt %d (%d calls): want SUCCESS on the second", r.Task.State, r.Attempt.Number, calls.Load())
	}
}

// TestSnooze: a snooze leaves the task SENSING for exactly its time,
// without using an attempt.
func TestSnooze(t *testing.T) {
	t.Parallel()
	c := grittest.NewClient(t, grit.Config{})
	var ready atomic.Bool
	handle(t, c, "sensor", func(context.Context, struct{}) error {
		if !ready.Load() {
			return grit.Snooze(30 * time.Second)
		}
		return nil
	}, grit.HandlerConfig{})
	start := c.Now()
	r := c.Work(t, "sensor", struct{}{})
	if r.Task.State != task.Sensing || r.Attempt.Outcome != task.OutcomeSnoozed || r.Task.Attempt != 0 || r.Task.Snoozes != 1 {
		t.Fatalf("after a snooze: task %s, attempt %s, %d attempts used, %d snoozes: want SENSING, SNOOZED, none used, one",
			r.Task.State, r.Attempt.Outcome, r.Task.Attempt, r.Task.Snoozes)
	}
	if want := start.Add(30 * time.Second); !r.Task.NextAt.Equal(want) {
		t.Errorf("the snooze ends at %v, want %v", r.Task.NextAt, want)
	}
	c.Advance(30 * time.Second)
	ready.Store(true)
	if r = c.WorkTask(t, r.Task.ID); r.Task.State != task.Success {
		t.Fatalf("after the snooze: task %s, want SUCCESS", r.Task.State)
	}
}

// TestEnqueueAndPublish: what a handler enqueues is asserted, typed, and
// does not run; what it publishes is kept with its success.
func TestEnqueueAndPublish(t *testing.T) {
	t.Parallel()
	c := grittest.NewClient(t, grit.Config{})
	handle(t, c, "charge", func(ctx context.Context, o Order) error {
		if _, err := c.Enqueue(ctx, "receipt", Receipt{Order: o.ID}, grit.InQueue("mail")); err != nil {
			return err
		}
		return grit.Publish(ctx, "charged", o)
	}, grit.HandlerConfig{})
	handle(t, c, "receipt", func(context.Context, Receipt) error {
		t.Error("the receipt ran: Work runs only the task it names")
		return nil
	}, grit.HandlerConfig{})
	r := c.Work(t, "charge", Order{ID: "o-3", Cents: 700})
	if r.Task.State != task.Success {
		t.Fatalf("task %s (%q), want SUCCESS", r.Task.State, r.Task.LastError)
	}
	rc := grittest.RequireEnqueued(t, c, "receipt", func(a Receipt) bool { return a.Order == "o-3" })
	if rc.Queue != "mail" || rc.State != task.Ready || rc.Args.Order != "o-3" {
		t.Errorf("the receipt is in queue %q, %s, args %+v: want queue mail, READY, order o-3", rc.Queue, rc.State, rc.Args)
	}
	ev := grittest.RequirePublished(t, c, "charged", func(o Order) bool { return o.Cents == 700 })
	if ev.TaskID != r.Task.ID || ev.Payload.ID != "o-3" {
		t.Errorf("the event %+v: want published by task %d, for o-3", ev, r.Task.ID)
	}
	if n := len(grittest.Enqueued[Receipt](t, c, "receipt")); n != 1 {
		t.Errorf("%d receipts enqueued, want 1", n)
	}
	if _, err := c.Publish(context.Background(), "charged", Order{ID: "o-3b"}); err != nil {
		t.Fatal(err)
	}
	if own := grittest.RequirePublished(t, c, "charged", func(o Order) bool { return o.ID == "o-3b" }); own.TaskID != 0 {
		t.Errorf("the client's own event is said to be task %d's", own.TaskID)
	}
}

// TestPublishOnlyWithSuccess: a failed attempt's events are not
// published.
func TestPublishOnlyWithSuccess(t *testing.T) {
	t.Parallel()
	c := grittest.NewClient(t, grit.Config{})
	handle(t, c, "charge", func(ctx context.Context, o Order) error {
		if err := grit.Publish(ctx, "charged", o); err != nil {
			return err
		}
		return retry.Permanent(errors.New("declined"))
	}, grit.HandlerConfig{})
	if r := c.Work(t, "charge", Order{ID: "o-4"}); r.Task.State != task.Failed {
		t.Fatalf("task %s, want FAILED", r.Task.State)
	}
	if evs := grittest.Published[Order](t, c, "charged"); len(evs) != 0 {
		t.Errorf("a failed attempt published %+v", evs)
	}
}

// TestReceive: a handler that receives waits, SENSING, until the test
// sends it the message; then it runs again and gets it.
func TestReceive(t *testing.T) {
	t.Parallel()
	c := grittest.NewClient(t, grit.Config{})
	var by string
	handle(t, c, "refund", func(ctx context.Context, o Order) error {
		a, err := grit.Receive[Approval](ctx, "approval", time.Hour)
		if err != nil {
			return err
		}
		by = a.By
		return nil
	}, grit.HandlerConfig{})
	r := c.Work(t, "refund", Order{ID: "o-5"})
	if r.Task.State != task.Sensing || !strings.Contains(r.Attempt.Decision, "approval") {
		t.Fatalf("before the message: task %s, decision %q: want SENSING, waiting for approval", r.Task.State, r.Attempt.Decision)
	}
	if _, err := c.SendToTask(context.Background(), r.Task.ID, "approval", Approval{By: "ana"}); err != nil {
		t.Fatal(err)
	}
	grittest.RequireSent(t, c, "approval", func(a Approval) bool { return a.By == "ana" })
	if r = c.WorkTask(t, r.Task.ID); r.Task.State != task.Success || by != "ana" {
		t.Fatalf("after the message: task %s, received from %q: want SUCCESS, from ana", r.Task.State, by)
	}
}

// TestReceiveTimesOut: RunUntilDone moves the clock to the receive's
// timeout, and the handler sees it.
func TestReceiveTimesOut(t *testing.T) {
	t.Parallel()
	c := grittest.NewClient(t, grit.Config{})
	handle(t, c, "refund", func(ctx context.Context, o Order) error {
		_, err := grit.Receive[Approval](ctx, "approval", time.Hour)
		if errors.Is(err, grit.ErrReceiveTimeout) {
			return retry.Permanent(errors.New("nobody approved within the hour"))
		}
		return err
	}, grit.HandlerConfig{})
	start := c.Now()
	first := c.Work(t, "refund", Order{ID: "o-6"})
	rs := c.RunUntilDone(t, first.Task.ID)
	last := rs[len(rs)-1]
	if last.Task.State != task.Failed || !strings.Contains(last.Task.LastError, "nobody approved") {
		t.Fatalf("task %s (%q), want FAILED: nobody approved", last.Task.State, last.Task.LastError)
	}
	if got := c.Now().Sub(start); got != time.Hour {
		t.Errorf("the clock moved %v, want the receive's hour", got)
	}
}

// TestRunUntilDone goes through the retries to the dead letter a
// repeated failure is.
func TestRunUntilDone(t *testing.T) {
	t.Parallel()
	c := grittest.NewClient(t, grit.Config{})
	handle(t, c, "parse", func(context.Context, struct{}) error {
		return errors.New("bad header")
	}, grit.HandlerConfig{Policy: "5 1s 1m"})
	e, err := c.Enqueue(context.Background(), "parse", struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	rs := c.RunUntilDone(t, e.ID)
	var states []task.State
	for _, r := range rs {
		states = append(states, r.Task.State)
	}
	if fmt.Sprint(states) != "[RETRYING DEAD_LETTER]" {
		t.Errorf("states after each attempt %v, want [RETRYING DEAD_LETTER]: the same failure twice is poison", states)
	}
}

// TestQuarantine: a row set aside is asserted, typed.
func TestQuarantine(t *testing.T) {
	t.Parallel()
	c := grittest.NewClient(t, grit.Config{})
	type Row struct{ Line int }
	handle(t, c, "import", func(ctx context.Context, rows []Row) error {
		for _, r := range rows {
			if r.Line == 2 {
				if err := grit.Quarantine(ctx, r, errors.New("no amount")); err != nil {
					return err
				}
			}
		}
		return nil
	}, grit.HandlerConfig{})
	if r := c.Work(t, "import", []Row{{1}, {2}, {3}}); r.Task.State != task.Success {
		t.Fatalf("task %s (%q), want SUCCESS", r.Task.State, r.Task.LastError)
	}
	q := grittest.RequireQuarantined(t, c, "import", func(r Row) bool { return r.Line == 2 })
	if q.Error != "no amount" {
		t.Errorf("the row's error %q, want no amount", q.Error)
	}
}

// TestFailureMessages: each assertion, failing, says what it wanted and
// what there was instead.
func TestFailureMessages(t *testing.T) {
	t.Parallel()
	c := grittest.NewClient(t, grit.Config{})
	handle(t, c, "charge", func(ctx context.Context, o Order) error {
		if _, err := c.Enqueue(ctx, "receipt", Receipt{Order: o.ID}); err != nil {
			return err
		}
		return grit.Publish(ctx, "charged", o)
	}, grit.HandlerConfig{})
	c.Work(t, "charge", Order{ID: "o-7", Cents: 1})
	e, err := c.Enqueue(context.Background(), "refund", Order{ID: "o-8"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func(testing.TB)
		want []string
	}{
		{"enqueued, none matches", func(tb testing.TB) {
			grittest.RequireEnqueued(tb, c, "receipt", func(r Receipt) bool { return r.Order == "o-9" })
		}, []string{`no task of kind "receipt" matches`, `{"order":"o-7"}`, "READY"}},
		{"enqueued, no such kind", func(tb testing.TB) {
			grittest.RequireEnqueued[Receipt](tb, c, "reciept", nil)
		}, []string{`no task of kind "reciept"`, `"charge"`, `"receipt"`}},
		{"enqueued, args of another type", func(tb testing.TB) {
			grittest.RequireEnqueued[int](tb, c, "receipt", nil)
		}, []string{"does not decode into int"}},
		{"published, none matches", func(tb testing.TB) {
			grittest.RequirePublished(tb, c, "charged", func(o Order) bool { return o.Cents == 2 })
		}, []string{`no event on topic "charged" matches`, `"cents":1`}},
		{"published, no such topic", func(tb testing.TB) {
			grittest.RequirePublished[Order](tb, c, "refunded", nil)
		}, []string{`no event on topic "refunded"`, `"charged"`}},
		{"sent, none", func(tb testing.TB) {
			grittest.RequireSent[Approval](tb, c, "approval", nil)
		}, []string{`no message on topic "approval"`, "none"}},
		{"quarantined, none", func(tb testing.TB) {
			grittest.RequireQuarantined[Order](tb, c, "charge", nil)
		}, []string{`no item quarantined by a task of kind "charge"`}},
		{"work, no handler", func(tb testing.TB) {
			c.WorkTask(tb, e.ID)
		}, []string{`no handler serves kind "refund"`, "grit.Handle(c.Client, \"refund\""}},
		{"work, ended", func(tb testing.TB) {
			c.WorkTask(tb, grittest.RequireEnqueued[Order](tb, c, "charge", nil).ID)
		}, []string{"it has ended, SUCCESS"}},
		{"work, no task", func(tb testing.TB) { c.WorkTask(tb, 999) }, []string{"work task 999"}},
	}
	for _, tt := range tests {
		msg := fatalOf(t, tt.call)
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: the failure %q does not say %q", tt.name, msg, w)
			}
		}
	}
}

// recorder is a testing.TB whose Fatalf records its message and ends
// the goroutine, as the testing package's does; the rest is the test's.
type recorder struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.msg = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// fatalOf runs call with a recorder and returns the message it failed
// with, failing t if it did not fail.
func fatalOf(t *testing.T, call func(testing.TB)) string {
	t.Helper()
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		call(r)
	}()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.msg == "" {
		t.Fatal("the call did not fail the test")
	}
	return r.msg
}
