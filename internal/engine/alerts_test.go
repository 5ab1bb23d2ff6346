package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// webhookServer is an alert receiver on loopback: it hands each POST's
// body to posts and counts them.
type webhookServer struct {
	*httptest.Server
	posts chan map[string]any
	n     atomic.Int64
}

func newWebhookServer(t *testing.T, hold <-chan struct{}) *webhookServer {
	w := &webhookServer{posts: make(chan map[string]any, 100)}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.n.Add(1)
		var m map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("the webhook got %q: %v", b, err)
		}
		w.posts <- m
		if hold != nil {
			<-hold
		}
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webhookServer) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m := <-w.posts:
		return m
	case <-time.After(20 * time.Second):
		t.Fatalf("no POST to the webhook after %d", w.n.Load())
		return nil
	}
}

// poisonous fails every attempt the same way: the second is poison.
var poisonous = Handler{Kind: "charge", Policy: &retry.Policy{MaxAttempts: 10, Backoff: retry.Constant{Interval: time.Millisecond}},
	Fn: func(context.Context, *task.Task) error { return errors.New("charge: card declined") }}

// TestDeadLetterPostsOneAlert: a task dead-lettered through a real
// engine on a real store produces one POST to the webhook, after the
// store recorded it, with the task's details; its sibling that succeeds
// produces none.
func TestDeadLetterPostsOneAlert(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	hook := newWebhookServer(t, nil)
	cfg := testConfig(st)
	cfg.AlertWebhook = hook.URL + "/grit"
	ok := Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }}
	e := start(t, cfg, poisonous, ok)
	dead := enqueue(t, st, task.NewTask{Kind: "charge", Queue: "billing", Group: "payments", Tenant: "acme"})
	fine := enqueue(t, st, task.NewTask{Kind: "ok", Queue: "billing"})

	m := hook.next(t)
	// The alert comes after the store recorded the dead letter: at the
	// POST the task is DEAD_LETTER already.
	got, err := st.GetTask(context.Background(), dead.ID)
	if err != nil || got.State != task.DeadLetter {
		t.Fatalf("at the POST the task is %s (%v), want DEAD_LETTER", got.State, err)
	}
	waitState(t, st, fine.ID, task.Success)
	at, err := time.Parse(time.RFC3339Nano, m["time"].(string))
	if err != nil || at.Before(got.CreatedAt) {
		t.Errorf("time %v (%v), want when it was recorded", m["time"], err)
	}
	want := map[string]any{"type": "dead_letter", "task_id": float64(dead.ID), "kind": "charge", "queue": "billing", "group": "payments",
		"tenant": "acme", "run_id": nil, "attempt": 2.0, "fingerprint": got.Fingerprint, "error": got.LastError, "until": nil, "tasks": 0.0,
		"link": "grit task " + strconv.FormatInt(dead.ID, 10)}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s: %v, want %v (body %v)", k, m[k], v, m)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := hook.n.Load(); n != 1 {
		t.Errorf("%d POSTs, want 1", n)
	}
}

// TestHungWebhookDoesNotBlockTheEngine: while the webhook holds every
// POST, dead letters keep being recorded and other tasks keep
// completing; Stop gives the waiting alerts up at its deadline.
func TestHungWebhookDoesNotBlockTheEngine(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	hold := make(chan struct{})
	hook := newWebhookServer(t, hold)
	t.Cleanup(func() { close(hold) }) // runs before the server's Close, which waits for its handlers
	cfg := testConfig(st)
	cfg.AlertWebhook = hook.URL
	cfg.Protection.OutageTasks = -1 // five tasks failing alike, none succeeding, would be an outage: held, not dead-lettered
	ok := Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []Handler{poisonous, ok} {
		if err := e.Register(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var dead []task.Task
	for range 5 {
		dead = append(dead, enqueue(t, st, task.NewTask{Kind: "charge"}))
	}
	hook.next(t) // the webhook holds the first alert from now on
	var fine []task.Task
	for range 20 {
		fine = append(fine, enqueue(t, st, task.NewTask{Kind: "ok"}))
	}
	for _, x := range append(dead, fine...) {
		waitState(t, st, x.ID, task.DeadLetter, task.Success)
	}
	stopped := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	go func() { stopped <- e.Stop(ctx) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stop did not return: the hung webhook holds it")
	}
}

// TestBreakerOpenedAlertsTheCallback: a group's breaker opening reaches
// the Go callback, once, with when its first probe goes.
func TestBreakerOpenedAlertsTheCallback(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cfg := testConfig(st)
	cfg.Breaker = breaker.Settings{Consecutive: 3, CoolDown: 5 * time.Minute, RampUp: -1}
	cfg.Protection.OutageTasks = -1 // six tasks failing alike, none succeeding, would be an outage too: its own alert
	alerts := make(chan alert.Event, 100)
	cfg.OnAlert = func(ev alert.Event) { alerts <- ev }
	down := Handler{Kind: "call", Group: "api", Policy: &retry.Policy{MaxAttempts: 50, Backoff: retry.Constant{Interval: time.Millisecond}},
		Fn: func(context.Context, *task.Task) error { return retry.Transient(errors.New("api: 503")) }}
	e := start(t, cfg, down)
	for range 6 {
		enqueue(t, st, task.NewTask{Kind: "call", Group: "api"})
	}
	var ev alert.Event
	select {
	case ev = <-alerts:
	case <-time.After(20 * time.Second):
		t.Fatalf("no alert; breaker %+v", circuitOf(t, st, "api"))
	}
	c := circuitOf(t, st, "api")
	if ev.Type != alert.BreakerOpened || ev.Group != "api" || !ev.Until.Equal(c.NextProbe()) || ev.Link != "grit breakers" {
		t.Errorf("alert %+v; breaker %+v", ev, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.Stop(ctx)
	select {
	case ev := <-alerts:
		t.Errorf("a second alert %+v", ev)
	default:
	}
}
