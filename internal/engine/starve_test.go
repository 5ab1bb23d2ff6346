package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// startStarving starts an engine, as start does, whose measure of its
// goroutines' wait to run is wait rather than the runtime's (which a
// busy test machine would make vary).
func startStarving(t *testing.T, cfg Config, wait func() time.Duration, hs ...Handler) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.runWait = wait
	for _, h := range hs {
		if err := e.Register(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.Stop(ctx)
	})
	return e
}

// leaseTimerCase is an engine on a fake clock (lease 15s, heartbeat 5s),
// its store on the machine's, running one attempt that holds until
// released, and what it saw.
type leaseTimerCase struct {
	fc      *clock.Fake
	st      *silentBeat
	logs    *lockedLog
	running chan struct{}
	release chan struct{}
	cause   chan error
}

func newLeaseTimerCase(t *testing.T, frozen bool, wait func() time.Duration) *leaseTimerCase {
	t.Helper()
	c := &leaseTimerCase{fc: clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)), logs: &lockedLog{},
		running: make(chan struct{}), release: make(chan struct{}), cause: make(chan error, 1)}
	// The store keeps the machine's time: the process's clock jumps (it
	// was starved), the database's leases do not expire meanwhile.
	c.st = &silentBeat{Store: newSQLite(t), frozen: make(chan struct{}), released: make(chan struct{})}
	if frozen {
		close(c.st.frozen)
	}
	enqueue(t, c.st, task.NewTask{Kind: "hold"})
	cfg := testConfig(c.st)
	cfg.Clock, cfg.Lease, cfg.Heartbeat, cfg.Poll = c.fc, 15*time.Second, 5*time.Second, time.Second
	cfg.Logger = slog.New(slog.NewTextHandler(c.logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	startStarving(t, cfg, wait, Handler{Kind: "hold", Fn: func(ctx context.Context, _ *task.Task) error {
		close(c.running)
		select {
		case <-ctx.Done():
			c.cause <- context.Cause(ctx)
			return ctx.Err()
		case <-c.release:
			return nil
		}
	}})
	t.Cleanup(func() { close(c.st.released) })
	select {
	case <-c.running:
	case <-time.After(10 * time.Second):
		t.Fatal("the task did not start within 10s")
	}
	return c
}

func (c *leaseTimerCase) notCancelled(t *testing.T, when string) {
	t.Helper()
	select {
	case err := <-c.cause:
		t.Fatalf("the attempt was cancelled (%v) %s", err, when)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestLateLeaseTimerAsksTheDatabaseFirst: a lease timer that fires ten
// seconds late (the process was starved of CPU) does not give up the
// attempt; the beat it sends renews the lease, and the attempt succeeds.
func TestLateLeaseTimerAsksTheDatabaseFirst(t *testing.T) {
	t.Parallel()
	c := newLeaseTimerCase(t, false, func() time.Duration { return 0 })
	_, before := c.st.last()
	c.fc.Advance(25 * time.Second) // the timer, due at 15s, fires at 25s
	waitFor(t, 10*time.Second, func() bool { _, n := c.st.last(); return n > before },
		func() string { return "a heartbeat after the late timer" })
	c.notCancelled(t, "after a lease timer that fired late")
	if !strings.Contains(c.logs.String(), "starved of CPU") {
		t.Errorf("logs:\n%s\nwant the late timer told as a starved process", c.logs)
	}
	close(c.release)
	waitFor(t, 10*time.Second, func() bool {
		ts, err := c.st.ListTasks(context.Background(), task.Filter{})
		return err == nil && len(ts) == 1 && ts[0].State == task.Success && ts[0].Attempt == 1
	}, func() string { return "the attempt to succeed, once" })
}

// TestStarvedWorkerGivesUpWhenTheDatabaseStaysSilent: a worker whose
// goroutines wait long to run gets one more heartbeat, not more, when
// its database does not answer: its attempt is cancelled, as its lease
// lost, a lease and a heartbeat after its start.
func TestStarvedWorkerGivesUpWhenTheDatabaseStaysSilent(t *testing.T) {
	t.Parallel()
	c := newLeaseTimerCase(t, true, func() time.Duration { return 10 * time.Second })
	for range 15 {
		c.fc.Advance(time.Second)
	}
	waitFor(t, 10*time.Second, func() bool { return strings.Contains(c.logs.String(), "starved of CPU") },
		func() string { return "the starved worker to ask the database again" })
	c.notCancelled(t, "a lease after the start, while starved")
	for range 5 {
		c.fc.Advance(time.Second)
	}
	select {
	case err := <-c.cause:
		if !errors.Is(err, task.ErrLeaseLost) {
			t.Errorf("cancelled with %v, want the lease lost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the attempt was not cancelled a lease and a heartbeat after the start; logs:\n%s", c.logs)
	}
}

// TestRunWaitsSeesAStorm: the runtime's measure of goroutines' wait to
// run sees a storm of goroutines that each want the CPU for a while.
func TestRunWaitsSeesAStorm(t *testing.T) {
	t.Parallel()
	r := newRunWaits()
	var wg sync.WaitGroup
	for range 16 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
			}
		})
	}
	wg.Wait()
	if w := r.since(); w < 10*time.Millisecond {
		t.Errorf("after a storm of %d spinning goroutines, the slowest in a hundred waited %v to run; want 10ms or more", 16*runtime.GOMAXPROCS(0), w)
	}
}

// gatedBeat is a store whose first heartbeat that renews a lease waits
// for open; it counts those heartbeats.
type gatedBeat struct {
	*sqlite.Store
	open chan struct{}
	mu   sync.Mutex
	n    int
}

func (s *gatedBeat) Heartbeat(ctx context.Context, worker string, lease time.Duration, held []store.Lease) ([]store.Lease, error) {
	if len(held) > 0 {
		s.mu.Lock()
		s.n++
		first := s.n == 1
		s.mu.Unlock()
		if first {
			select {
			case <-s.open:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return s.Store.Heartbeat(ctx, worker, lease, held)
}

// TestProcessStartsShareOneHeartbeat: twenty process tasks claimed at
// once confirm their leases before they start in at most two heartbeats
// (the first, and one for all that asked while it ran), not twenty.
func TestProcessStartsShareOneHeartbeat(t *testing.T) {
	t.Parallel()
	st := &gatedBeat{Store: newSQLite(t), open: make(chan struct{})}
	const n = 20
	for range n {
		enqueue(t, st, task.NewTask{Kind: task.KindExec, Args: execArgs(t, task.Exec{Argv: []string{"true"}})})
	}
	cfg := testConfig(st)
	cfg.Concurrency, cfg.Lease, cfg.Heartbeat = n, 3*time.Minute, time.Minute // no periodic beat within the test
	e := start(t, cfg)
	waitFor(t, 10*time.Second, func() bool { _, asked := e.confirms.counts(); return asked == n },
		func() string {
			waiting, asked := e.confirms.counts()
			return fmt.Sprintf("every process start to ask for its lease while the first heartbeat waits (%d asked, %d wait)", asked, waiting)
		})
	close(st.open)
	waitFor(t, 20*time.Second, func() bool {
		cs, err := st.QueueCounts(context.Background())
		return err == nil && len(cs) == 1 && cs[0].State == task.Success && cs[0].N == n
	}, func() string { return "every process task to succeed" })
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.n > 2 {
		t.Errorf("%d heartbeats renewed leases for %d process starts, want at most 2", st.n, n)
	}
}
