package engine

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// silentBeat is a store whose heartbeats, once frozen, never answer: they
// last until their context ends, as on a database whose connections stay
// open but go silent. It keeps when the last beat that succeeded began.
type silentBeat struct {
	*sqlite.Store
	frozen   chan struct{}
	released chan struct{} // closed when the test ends: a frozen beat returns then

	mu      sync.Mutex
	lastOK  time.Time
	renewed int
}

func (s *silentBeat) Heartbeat(ctx context.Context, worker string, lease time.Duration, held []store.Lease) ([]store.Lease, error) {
	select {
	case <-s.frozen:
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.released: // an engine whose beats have no deadline must still stop, so that the test fails rather than hangs
			return nil, errors.New("silentBeat: released at the end of the test")
		}
	default:
	}
	start := time.Now()
	lost, err := s.Store.Heartbeat(ctx, worker, lease, held)
	if err == nil {
		s.mu.Lock()
		s.lastOK = start
		s.renewed += len(held)
		s.mu.Unlock()
	}
	return lost, err
}

func (s *silentBeat) last() (time.Time, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastOK, s.renewed
}

// TestSilentHeartbeatKillsTheAttemptWithinALease: a worker whose
// heartbeats hang (they never fail, they never answer) cancels its
// attempts, and kills their processes without the SIGTERM grace, within
// a lease and a second of the start of its last renewal: a sibling may
// take them over from then on.
func TestSilentHeartbeatKillsTheAttemptWithinALease(t *testing.T) {
	t.Parallel()
	st := &silentBeat{Store: newSQLite(t), frozen: make(chan struct{}), released: make(chan struct{})}
	cfg := testConfig(st)
	cfg.Lease, cfg.Heartbeat = time.Second, 100*time.Millisecond
	start(t, cfg)
	t.Cleanup(func() { close(st.released) }) // before the engine's Stop, which start registered first
	// Every attempt's process adds its pid to the file: the first is the
	// one watched, and the test's end kills them all (an engine that
	// fails the test may have started more, and its Stop would wait for
	// them).
	pidfile := filepath.Join(t.TempDir(), "pids")
	enqueue(t, st, task.NewTask{Kind: task.KindExec, Args: execArgs(t, task.Exec{
		Shell: `echo $$ >> "$PIDFILE"; trap '' TERM; exec sleep 600`,
		Env:   []string{"PIDFILE=" + pidfile},
	})})
	pids := func() []int {
		b, _ := os.ReadFile(pidfile)
		var out []int
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				out = append(out, p)
			}
		}
		return out
	}
	t.Cleanup(func() {
		for _, p := range pids() {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	var pid int
	waitFor(t, 10*time.Second, func() bool {
		if ps := pids(); len(ps) > 0 {
			pid = ps[0]
		}
		_, renewed := st.last()
		return pid > 0 && renewed > 0
	}, func() string { return "the task to start and its lease to be renewed" })
	close(st.frozen)
	lastOK, _ := st.last()
	waitFor(t, 10*time.Second, func() bool { return !alive(pid) },
		func() string { return "the task's process to be killed after the heartbeats went silent" })
	if d := time.Since(lastOK); d > cfg.Lease+time.Second {
		t.Errorf("the process died %v after the last renewal began, want within the lease (%v) + 1s", d, cfg.Lease)
	}
}

// alive reports whether pid is a running process (not gone, not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// TestStartEndsTheOrphansOfGoneWorkers: a process left by a worker that
// is gone (tagged with its pid) is killed when a worker starts on the
// host, whatever the store says of that worker; one tagged with a live
// worker's pid is not.
func TestStartEndsTheOrphansOfGoneWorkers(t *testing.T) {
	t.Parallel()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	sleep := func(workerPID int) *exec.Cmd {
		cmd := exec.Command("sleep", "300")
		cmd.Env = append(cmd.Environ(), workerPIDTag+"="+strconv.Itoa(workerPID))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	orphan := sleep(gone.Process.Pid)
	kept := sleep(os.Getpid())
	start(t, testConfig(newStore(t)))
	exited := make(chan error, 1)
	go func() { exited <- orphan.Wait() }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the orphan of a gone worker was not killed within 10s of the start")
	}
	if !alive(kept.Process.Pid) {
		t.Error("a process of a live worker was killed")
	}
}

// TestLeaseTimerRunsOnTheEnginesClock: with heartbeats that never answer,
// a running attempt is cancelled (as its lease lost) when the engine's
// clock passes a lease after the start, and not before: a fake clock the
// test moves stands in for the time.
func TestLeaseTimerRunsOnTheEnginesClock(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	db, err := sqlite.OpenConfig(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "grit.db"), Now: fc.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := &silentBeat{Store: db, frozen: make(chan struct{})}
	close(st.frozen)
	enqueue(t, st, task.NewTask{Kind: "hold"})
	cfg := testConfig(st)
	cfg.Clock, cfg.Lease, cfg.Heartbeat, cfg.Poll = fc, 15*time.Second, 5*time.Second, time.Second
	running, cause := make(chan struct{}), make(chan error, 1)
	// No goroutine waits to run: a starved process would get one more
	// heartbeat (TestStarvedWorkerGivesUpWhenTheDatabaseStaysSilent).
	startStarving(t, cfg, func() time.Duration { return 0 }, Handler{Kind: "hold", Fn: func(ctx context.Context, _ *task.Task) error {
		close(running)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	}})
	select {
	case <-running:
	case <-time.After(10 * time.Second):
		t.Fatal("the task did not start within 10s")
	}
	for range 14 {
		fc.Advance(time.Second)
	}
	select {
	case c := <-cause:
		t.Fatalf("the attempt was cancelled (%v) before a lease had passed", c)
	case <-time.After(100 * time.Millisecond):
	}
	fc.Advance(time.Second)
	select {
	case c := <-cause:
		if !errors.Is(c, task.ErrLeaseLost) {
			t.Errorf("cancelled with %v, want the lease lost", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the attempt was not cancelled once a lease had passed on the engine's clock")
	}
}
