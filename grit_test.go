package grit_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

type charge struct {
	Order string `json:"order"`
	Cents int    `json:"cents"`
}

func open(t *testing.T) *grit.Client {
	t.Helper()
	c, err := grit.Open(context.Background(), sqlitetest.DSN(t), grit.Config{Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func startClient(t *testing.T, c *grit.Client) {
	t.Helper()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Stop(ctx)
	})
}

func waitTask(t *testing.T, c *grit.Client, id int64, want task.State) task.Task {
	t.Helper()
	return waitTaskFor(t, c, id, want, 20*time.Second)
}

// waitTaskFor waits, for at most d, until the task is in state want, and
// returns it.
func waitTaskFor(t *testing.T, c *grit.Client, id int64, want task.State, d time.Duration) task.Task {
	t.Helper()
	var tk task.Task
	poll.UntilSays(t, d, func() string { return fmt.Sprintf("task %d is %s (%s), want %s", id, tk.State, tk.LastError, want) }, func() bool {
		var err error
		if tk, err = c.Task(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return tk.State == want
	})
	return tk
}

func TestTypedHandlerGetsItsArgs(t *testing.T) {
	t.Parallel()
	c := open(t)
	var mu sync.Mutex
	var got []charge
	var attempts []grit.Attempt
	err := grit.Handle(c, "charge", func(ctx context.Context, a charge) error {
		at, _ := grit.AttemptFrom(ctx)
		mu.Lock()
		defer mu.Unlock()
		got, attempts = append(got, a), append(attempts, at)
		if len(got) == 1 {
			return retry.Transient(errors.New("payments-api: 503"))
		}
		return nil
	}, grit.HandlerConfig{Policy: "3 10ms", Timeout: 5 * time.Second, Group: "payments-api"})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, c)
	tk, err := c.Enqueue(context.Background(), "charge", charge{"o-42", 1999}, grit.WithKey("charge-o-42"))
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, c, tk.ID, task.Success)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[1] != (charge{"o-42", 1999}) {
		t.Errorf("handler got %+v", got)
	}
	if attempts[0].Number != 1 || attempts[1].Number != 2 || attempts[1].LeaseToken <= attempts[0].LeaseToken {
		t.Errorf("attempts %+v: want numbers 1, 2 and a growing lease token", attempts)
	}
}

func TestEnqueueIsIdempotentByKey(t *testing.T) {
	t.Parallel()
	c := open(t)
	a, err := c.Enqueue(context.Background(), "charge", charge{"o-1", 1}, grit.WithKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Enqueue(context.Background(), "charge", charge{"o-1", 1}, grit.WithKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != b.ID {
		t.Errorf("the same key made tasks %d and %d", a.ID, b.ID)
	}
	d, _ := c.Enqueue(context.Background(), "charge", charge{"o-1", 1}, grit.WithKey("k2"))
	if d.ID == a.ID {
		t.Error("another key returned the same task")
	}
}

func TestEnqueueOptions(t *testing.T) {
	t.Parallel()
	c := open(t)
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	tk, err := c.Enqueue(context.Background(), "later", nil, grit.RunAt(at), grit.InQueue("slow"),
		grit.WithPriority(5), grit.WithPolicy("2 1s"), grit.WithTimeout(time.Minute), grit.InGroup("smtp"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := c.Task(context.Background(), tk.ID)
	if !got.NextAt.Equal(at) || got.Queue != "slow" || got.Priority != 5 || got.Policy != "2 1s" || got.Timeout != time.Minute || got.Group != "smtp" {
		t.Errorf("task %+v", got)
	}
	if _, err := c.Enqueue(context.Background(), "", nil); err == nil {
		t.Error("an enqueue without a kind succeeded")
	}
	if _, err := c.Enqueue(context.Background(), "x", func() {}); err == nil {
		t.Error("args that do not encode as JSON were accepted")
	}
}

func TestArgsThatDoNotDecodeFailAtOnce(t *testing.T) {
	t.Parallel()
	c := open(t)
	grit.Handle(c, "charge", func(context.Context, charge) error { return nil }, grit.HandlerConfig{})
	startClient(t, c)
	tk, _ := c.Enqueue(context.Background(), "charge", map[string]string{"cents": "lots"})
	got := waitTask(t, c, tk.ID, task.Failed)
	if got.Attempt != 1 {
		t.Errorf("attempts %d, want 1", got.Attempt)
	}
}

// TestSnooze: a snooze uses no attempt, and the sensor's attempt counts
// its snoozes (Attempt.Snoozes), so it can tell its looks apart.
func TestSnooze(t *testing.T) {
	t.Parallel()
	c := open(t)
	var mu sync.Mutex
	var seen []int
	grit.Handle(c, "sensor", func(ctx context.Context, _ struct{}) error {
		mu.Lock()
		defer mu.Unlock()
		a, _ := grit.AttemptFrom(ctx)
		seen = append(seen, a.Snoozes)
		if a.Snoozes < 2 {
			return grit.Snooze(10 * time.Millisecond)
		}
		return nil
	}, grit.HandlerConfig{Policy: "never"})
	startClient(t, c)
	tk, _ := c.Enqueue(context.Background(), "sensor", struct{}{})
	got := waitTask(t, c, tk.ID, task.Success)
	if got.Attempt != 1 || got.Snoozes != 2 {
		t.Errorf("attempt %d, %d snoozes; want 1 and 2: snoozes use no attempt, and are counted", got.Attempt, got.Snoozes)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, []int{0, 1, 2}) {
		t.Errorf("the handler saw %v snoozes, want 0, 1, 2", seen)
	}
}

func TestBadHandlerConfig(t *testing.T) {
	t.Parallel()
	c := open(t)
	if err := grit.Handle(c, "x", func(context.Context, struct{}) error { return nil }, grit.HandlerConfig{Policy: "10 5x"}); err == nil {
		t.Error("a bad policy string was accepted")
	}
	if _, err := grit.Open(context.Background(), "nosuch:x", grit.Config{}); err == nil {
		t.Error("a DSN without a driver was accepted")
	}
}

// TestEnqueueTakesTheHandlersGroup: a task enqueued for a kind whose
// handler names a group is in that group, unless it names its own.
func TestEnqueueTakesTheHandlersGroup(t *testing.T) {
	t.Parallel()
	c := open(t)
	if err := grit.Handle(c, "charge", func(context.Context, charge) error { return nil }, grit.HandlerConfig{Group: "payments-api"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := c.Enqueue(ctx, "charge", charge{"o-1", 1})
	if err != nil || a.Group != "payments-api" {
		t.Errorf("group %q (%v), want the handler's", a.Group, err)
	}
	b, err := c.Enqueue(ctx, "charge", charge{"o-2", 1}, grit.InGroup("payments-eu"))
	if err != nil || b.Group != "payments-eu" {
		t.Errorf("group %q (%v), want the one named", b.Group, err)
	}
}

// TestOnAlert: grit.Config's Alerting reaches the engine: a dead letter
// calls OnAlert once, with the task's details; a succeeding task does not.
func TestOnAlert(t *testing.T) {
	t.Parallel()
	alerts := make(chan grit.Alert, 10)
	c, err := grit.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"), grit.Config{
		Alerting: grit.Alerting{OnAlert: func(a grit.Alert) { alerts <- a }, DashboardURL: "https://grit.example/dash"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	grit.Handle(c, "charge", func(_ context.Context, a charge) error {
		if a.Cents < 0 {
			return errors.New("charge: negative amount")
		}
		return nil
	}, grit.HandlerConfig{Policy: "4 10ms", Group: "payments"})
	bad, _ := c.Enqueue(context.Background(), "charge", charge{"o-1", -5}, grit.InQueue("billing"))
	good, _ := c.Enqueue(context.Background(), "charge", charge{"o-2", 5})
	startClient(t, c)
	dead := waitTask(t, c, bad.ID, task.DeadLetter)
	waitTask(t, c, good.ID, task.Success)
	var a grit.Alert
	select {
	case a = <-alerts:
	case <-time.After(20 * time.Second):
		t.Fatal("no alert")
	}
	if a.Type != grit.AlertDeadLetter || a.TaskID != bad.ID || a.Kind != "charge" || a.Queue != "billing" || a.Group != "payments" ||
		a.Fingerprint != dead.Fingerprint || a.Error != "charge: negative amount" || a.Link != fmt.Sprintf("https://grit.example/dash/tasks/%d", bad.ID) {
		t.Errorf("alert %+v", a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Stop(ctx)
	select {
	case a := <-alerts:
		t.Errorf("a second alert %+v", a)
	default:
	}
}

func TestBadAlerting(t *testing.T) {
	t.Parallel()
	_, err := grit.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"), grit.Config{
		Alerting: grit.Alerting{AlertWebhook: "alerts.example/grit"},
	})
	if err == nil || !strings.Contains(err.Error(), "alert webhook") {
		t.Errorf("a webhook without a scheme: %v", err)
	}
}
