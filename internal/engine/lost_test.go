package engine

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// endedBeat is a store whose heartbeat, once the handler has returned,
// reports every lease it is asked about as lost (as a heartbeat does that
// runs after the attempt's result was committed but before the worker
// forgot the attempt), and whose Finish waits for that heartbeat.
type endedBeat struct {
	*sqlite.Store
	returned chan struct{} // closed by the handler as it returns
	beaten   chan struct{} // closed once the heartbeat reported the lease lost
	once     sync.Once
}

func (s *endedBeat) Heartbeat(ctx context.Context, worker string, lease time.Duration, held []store.Lease) ([]store.Lease, error) {
	lost, err := s.Store.Heartbeat(ctx, worker, lease, held)
	select {
	case <-s.returned:
	default:
		return lost, err
	}
	if len(held) > 0 {
		defer s.once.Do(func() { close(s.beaten) })
	}
	return held, err
}

func (s *endedBeat) Finish(ctx context.Context, fs []store.Finish) ([]error, error) {
	select {
	case <-s.beaten:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Store.Finish(ctx, fs)
}

// TestNoLeaseLostWarningForAnAttemptThatEnded: a heartbeat that finds an
// attempt's lease gone after its handler returned (its result was being
// recorded) warns of nothing and cancels nothing: the attempt is over.
func TestNoLeaseLostWarningForAnAttemptThatEnded(t *testing.T) {
	t.Parallel()
	st := &endedBeat{Store: newSQLite(t), returned: make(chan struct{}), beaten: make(chan struct{})}
	var logs bytes.Buffer
	var mu sync.Mutex
	cfg := testConfig(st)
	cfg.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	id := enqueue(t, st, task.NewTask{Kind: "quick"}).ID
	start(t, cfg, Handler{Kind: "quick", Fn: func(context.Context, *task.Task) error {
		close(st.returned)
		return nil
	}})
	waitState(t, st, id, task.Success)
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), "lease lost") {
		t.Errorf("warned of a lost lease for an attempt that had ended:\n%s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
