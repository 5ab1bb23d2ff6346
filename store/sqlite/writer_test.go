package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func openTest(t *testing.T, cfg Config) *Store {
	t.Helper()
	cfg.Path = filepath.Join(t.TempDir(), "grit.db")
	s, err := OpenConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestFailingRequestDoesNotFailItsBatch(t *testing.T) {
	t.Parallel()
	// A window long enough that the requests share a transaction.
	s := openTest(t, Config{BatchWindow: 50 * time.Millisecond})
	boom := errors.New("boom")
	insert := func(id string, fail bool) func(*wtx) error {
		return func(x *wtx) error {
			if _, err := x.exec(`INSERT INTO workers (id, started_at, last_seen) VALUES (?, 0, 0)`, id); err != nil {
				return err
			}
			if fail {
				return boom
			}
			return nil
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	reqs := []func(*wtx) error{
		insert("a", false), insert("b", true),
		func(*wtx) error { panic("bad request") }, insert("c", false),
	}
	for i, fn := range reqs {
		wg.Go(func() { errs[i] = s.w.do(t.Context(), fn) })
	}
	wg.Wait()
	if errs[0] != nil || !errors.Is(errs[1], boom) || errs[2] == nil || errs[3] != nil {
		t.Errorf("errors %v, want nil, boom, a panic error, nil", errs)
	}
	ws, err := s.Workers(t.Context())
	if err != nil || len(ws) != 2 || ws[0].ID != "a" || ws[1].ID != "c" {
		t.Errorf("workers %+v (%v), want a and c only", ws, err)
	}
}

func TestConcurrentWritesAllLand(t *testing.T) {
	t.Parallel()
	s := openTest(t, Config{})
	var wg sync.WaitGroup
	const writers = 64
	for range writers {
		wg.Go(func() {
			_, err := s.Enqueue(t.Context(), []task.NewTask{{Kind: "k"}})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	ts, err := s.ListTasks(t.Context(), task.Filter{})
	if err != nil || len(ts) != writers {
		t.Errorf("%d tasks (%v), want %d", len(ts), err, writers)
	}
}

func TestCloseFailsQueuedRequests(t *testing.T) {
	t.Parallel()
	s := openTest(t, Config{})
	started, release := make(chan struct{}), make(chan struct{})
	go s.w.do(context.Background(), func(*wtx) error {
		close(started)
		<-release
		return nil
	})
	<-started
	queued := make(chan error, 1)
	go func() { queued <- s.w.do(context.Background(), func(*wtx) error { return nil }) }()
	waitQueued(t, s.w, 1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	waitClosing(t, s.w)
	close(release)
	if err := <-queued; !errors.Is(err, ErrClosed) {
		t.Errorf("queued request: %v, want ErrClosed", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := s.Enqueue(t.Context(), []task.NewTask{{Kind: "k"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("enqueue after close: %v, want ErrClosed", err)
	}
}

// waitQueued waits until n requests wait in the writer's queue.
func waitQueued(t *testing.T, w *writer, n int) {
	t.Helper()
	poll.UntilSays(t, 10*time.Second, func() string { return fmt.Sprintf("%d requests queued, want %d", len(w.reqs), n) }, func() bool { return len(w.reqs) >= n })
}

func waitClosing(t *testing.T, w *writer) {
	t.Helper()
	select {
	case <-w.quit:
	case <-time.After(10 * time.Second):
		t.Fatal("close did not start")
	}
}

func TestInjectedClockDrivesLeases(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	now.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro())
	s := openTest(t, Config{Now: func() time.Time { return time.UnixMicro(now.Load()) }})
	ctx := t.Context()
	if _, err := s.Enqueue(ctx, []task.NewTask{{Kind: "k"}}); err != nil {
		t.Fatal(err)
	}
	c, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 1, Lease: time.Minute})
	if err != nil || len(c) != 1 {
		t.Fatalf("claim: %v %v", c, err)
	}
	if got, _ := s.Rescue(ctx, store.RescueRequest{Worker: "r"}); len(got) != 0 {
		t.Fatalf("rescued a live lease")
	}
	now.Add(time.Minute.Microseconds())
	got, err := s.Rescue(ctx, store.RescueRequest{Worker: "r"})
	if err != nil || len(got) != 1 || got[0].State != task.Running || got[0].LeaseOwner != "r" {
		t.Errorf("rescue after the lease: %+v %v", got, err)
	}
}

// TestContextEndNeverLeavesARunningWrite: a caller whose context ends
// while the writer runs its write waits for the write's end and is told
// what happened (the write committed: no error); a caller whose context
// ends while its write waits behind another is told at once, and its
// write never runs.
func TestContextEndNeverLeavesARunningWrite(t *testing.T) {
	t.Parallel()
	s := openTest(t, Config{})
	inside, release := make(chan struct{}), make(chan struct{})
	ctx1, cancel1 := context.WithCancel(t.Context())
	first := make(chan error, 1)
	var wrote string // written by the write, read by its caller: the race detector watches
	go func() {
		first <- s.w.do(ctx1, func(x *wtx) error {
			close(inside)
			<-release
			_, err := x.exec(`INSERT INTO workers (id, started_at, last_seen) VALUES ('running', 0, 0)`)
			wrote = "running"
			return err
		})
	}()
	<-inside
	ctx2, cancel2 := context.WithCancel(t.Context())
	var ran atomic.Bool
	second := make(chan error, 1)
	go func() {
		second <- s.w.do(ctx2, func(x *wtx) error {
			ran.Store(true)
			return nil
		})
	}()
	cancel2() // queued behind the running write: abandoned
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("a queued write whose context ended: %v, want context.Canceled at once", err)
	}
	cancel1() // running: its caller waits for it
	select {
	case err := <-first:
		t.Fatalf("the caller of a running write returned (%v) before the write ended", err)
	default:
	}
	close(release)
	if err := <-first; err != nil || wrote != "running" {
		t.Errorf("the running write's caller got %v (wrote %q), want nil: the write committed", err, wrote)
	}
	if ran.Load() {
		t.Error("the abandoned write ran")
	}
	var n int
	if err := s.queryRow(t.Context(), `SELECT count(*) FROM workers WHERE id = 'running'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d rows of the running write (%v), want 1", n, err)
	}
}
