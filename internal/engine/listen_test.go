package engine

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// lateListener is a store whose notifications start only when the test
// closes listening, and which reports each time the claim loop asks for the
// next due time, as it does before it sleeps.
type lateListener struct {
	*sqlite.Store
	listening chan struct{}
	asked     chan struct{}
}

func (s *lateListener) Wake(ctx context.Context) (<-chan struct{}, error) {
	select {
	case <-s.listening:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ch := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ch) })
	return ch, nil
}

func (s *lateListener) NextDue(ctx context.Context, req store.ClaimRequest) (time.Time, bool, error) {
	select {
	case s.asked <- struct{}{}:
	default:
	}
	return s.Store.NextDue(ctx, req)
}

// TestWorkEnqueuedBeforeListeningStarts: the engine starts claiming before
// its listener is up, so a task another process enqueues in between
// notifies no one. Once listening, the engine claims again: the task starts
// then, not at the next poll an hour later.
func TestWorkEnqueuedBeforeListeningStarts(t *testing.T) {
	t.Parallel()
	st := &lateListener{Store: newSQLite(t), listening: make(chan struct{}), asked: make(chan struct{}, 1)}
	cfg := testConfig(st)
	cfg.Poll = time.Hour
	start(t, cfg, Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }})
	select {
	case <-st.asked: // the first claim found nothing; the loop goes to sleep
	case <-time.After(10 * time.Second):
		t.Fatal("the claim loop did not look for work within 10s of Start")
	}
	tk := enqueue(t, st, task.NewTask{Kind: "ok"}) // through the store: no one is told
	close(st.listening)
	waitState(t, st, tk.ID, task.Success)
}

// advising is a store with advice about its setup.
type advising struct {
	*sqlite.Store
	advice []string
}

func (s advising) Advice(context.Context) ([]string, error) { return s.advice, nil }

// TestStartLogsTheStoresAdvice: a worker starting on a store with advice
// about its database logs each piece as a warning.
func TestStartLogsTheStoresAdvice(t *testing.T) {
	t.Parallel()
	st := advising{Store: newSQLite(t), advice: []string{"autovacuum is off on this server: turn it on"}}
	cfg := testConfig(st)
	var logs lockedLog
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	start(t, cfg)
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, st.advice[0]) {
		t.Errorf("logs after Start:\n%s\nwant the store's advice as a warning", got)
	}
}

// lockedLog is a log a test reads while the engine writes to it.
type lockedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// failingListener is a store whose first calls of Wake fail, as when the
// database is down at start or the listening connection is cut while it
// opens; the call after them waits for open before it succeeds.
type failingListener struct {
	*sqlite.Store
	fails    int
	attempts chan struct{}
	open     chan struct{}
}

func (s *failingListener) Wake(ctx context.Context) (<-chan struct{}, error) {
	s.attempts <- struct{}{}
	if s.fails > 0 {
		s.fails--
		return nil, errors.New("connection refused")
	}
	select {
	case <-s.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ch := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ch) })
	return ch, nil
}

// TestNotificationsStartAfterFailures: when the store's notifications
// cannot start, the engine keeps trying instead of polling for the rest
// of its life, and once they start it claims, so a task enqueued in
// between starts then, not at the next poll an hour later.
func TestNotificationsStartAfterFailures(t *testing.T) {
	t.Parallel()
	st := &failingListener{Store: newSQLite(t), fails: 2, attempts: make(chan struct{}, 3), open: make(chan struct{})}
	cfg := testConfig(st)
	cfg.Poll = time.Hour
	start(t, cfg, Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }})
	for i := range 3 { // two failures, then the attempt that waits for open
		select {
		case <-st.attempts:
		case <-time.After(10 * time.Second):
			t.Fatalf("attempt %d to start notifications did not come within 10s", i+1)
		}
	}
	tk := enqueue(t, st, task.NewTask{Kind: "ok"}) // through the store: no one is told
	close(st.open)
	waitState(t, st, tk.ID, task.Success)
}

// slowBeat is a store whose heartbeats last until their context ends, as a
// heartbeat in flight when the worker stops does.
type slowBeat struct {
	*sqlite.Store
	beating chan struct{}
}

func (s *slowBeat) Heartbeat(ctx context.Context, worker string, lease time.Duration, held []store.Lease) ([]store.Lease, error) {
	select {
	case s.beating <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestStopDuringAHeartbeatWarnsOfNothing: a heartbeat that a graceful stop
// cuts off did not fail, and a stop must not log that it did.
func TestStopDuringAHeartbeatWarnsOfNothing(t *testing.T) {
	t.Parallel()
	st := &slowBeat{Store: newSQLite(t), beating: make(chan struct{}, 1)}
	cfg := testConfig(st)
	cfg.Heartbeat = 10 * time.Millisecond
	var logs lockedLog
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.beating:
	case <-time.After(10 * time.Second):
		t.Fatal("no heartbeat within 10s of Start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := logs.String(); strings.Contains(got, "heartbeat failed") {
		t.Errorf("logs of a stop during a heartbeat:\n%s\nwant no heartbeat failure", got)
	}
}
