package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/grit-run/grit/metrics"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

func policy(s string) *retry.Policy {
	p := retry.MustParse(s)
	return &p
}

func TestSuccess(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	var got HandlerAttempt
	start(t, testConfig(st), Handler{Kind: "ok", Fn: func(ctx context.Context, tk *task.Task) error {
		got, _ = AttemptFrom(ctx)
		return nil
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "ok"})
	done := waitState(t, st, tk.ID, task.Success)
	if done.Attempt != 1 || got.Number != 1 || got.TaskID != tk.ID || got.LeaseToken == 0 {
		t.Errorf("attempt %d, context said %+v", done.Attempt, got)
	}
	as := attempts(t, st, tk.ID)
	if len(as) != 1 || as[0].Outcome != task.OutcomeSuccess || as[0].EndedAt.IsZero() {
		t.Errorf("attempts %+v", as)
	}
}

func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	var calls counter
	start(t, testConfig(st), Handler{Kind: "flaky", Policy: policy("5 20ms 40ms jitter=none"), Fn: func(ctx context.Context, tk *task.Task) error {
		if calls.inc() < 3 {
			return retry.Transient(errors.New("connection reset by peer"))
		}
		return nil
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "flaky"})
	done := waitState(t, st, tk.ID, task.Success)
	if done.Attempt != 3 {
		t.Errorf("succeeded on attempt %d, want 3", done.Attempt)
	}
	as := attempts(t, st, tk.ID)
	if len(as) != 3 || as[0].Decision != "retry" || as[0].Delay <= 0 || as[2].Outcome != task.OutcomeSuccess {
		t.Fatalf("attempts %+v", as)
	}
	// A retry never starts before it is due.
	for i := 1; i < len(as); i++ {
		if due := as[i-1].EndedAt.Add(as[i-1].Delay); as[i].StartedAt.Before(due.Add(-time.Millisecond)) {
			t.Errorf("attempt %d started at %v, before its due time %v", i+1, as[i].StartedAt, due)
		}
	}
}

func TestPermanentFailsAtOnce(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st), Handler{Kind: "bad", Fn: func(ctx context.Context, tk *task.Task) error {
		return retry.Permanent(errors.New("card declined"))
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "bad"})
	done := waitState(t, st, tk.ID, task.Failed)
	if done.Attempt != 1 || done.LastError != "card declined" {
		t.Errorf("task %+v", done)
	}
}

func TestPoisonIsDeadLettered(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	var calls counter
	start(t, testConfig(st), Handler{Kind: "poison", Policy: policy("10 10ms"), Fn: func(ctx context.Context, tk *task.Task) error {
		return fmt.Errorf("KeyError: %d", calls.inc()) // same structure, other number
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "poison"})
	done := waitState(t, st, tk.ID, task.DeadLetter)
	if done.Attempt != 2 || done.Streak != 2 || done.Fingerprint == "" {
		t.Errorf("dead-lettered after %d attempts, streak %d, fp %q; want 2, 2", done.Attempt, done.Streak, done.Fingerprint)
	}
	if as := attempts(t, st, tk.ID); as[1].Decision != "poison" {
		t.Errorf("last decision %q, want poison", as[1].Decision)
	}
}

func TestTransientIsNeverPoison(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st), Handler{Kind: "blip", Policy: policy("3 10ms"), Fn: func(ctx context.Context, tk *task.Task) error {
		return retry.Transient(errors.New("503 service unavailable"))
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "blip"})
	done := waitState(t, st, tk.ID, task.Failed)
	if done.Attempt != 4 {
		t.Errorf("failed after %d attempts, want all 4", done.Attempt)
	}
}

func TestPoisonAfterPerTask(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st), Handler{Kind: "p", Policy: policy("10 10ms"), Fn: func(ctx context.Context, tk *task.Task) error {
		return errors.New("same every time")
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "p", PoisonAfter: 3})
	if done := waitState(t, st, tk.ID, task.DeadLetter); done.Attempt != 3 {
		t.Errorf("dead-lettered after %d attempts, want 3", done.Attempt)
	}
}

func TestPanicIsAFailedAttempt(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st), Handler{Kind: "panics", Policy: policy("5 10ms"), Fn: func(ctx context.Context, tk *task.Task) error {
		var m map[string]int
		m["x"]++ // the same panic every time: poison
		return nil
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "panics"})
	done := waitState(t, st, tk.ID, task.DeadLetter)
	if done.Attempt != 2 {
		t.Errorf("attempts %d, want 2", done.Attempt)
	}
	as := attempts(t, st, tk.ID)
	if as[0].Fingerprint == "" || as[0].Fingerprint != as[1].Fingerprint {
		t.Errorf("panic fingerprints %q, %q", as[0].Fingerprint, as[1].Fingerprint)
	}
}

func TestTimeoutIsRetriedNeverPoison(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st), Handler{Kind: "slow", Policy: policy("2 10ms"), Timeout: 50 * time.Millisecond, Fn: func(ctx context.Context, tk *task.Task) error {
		<-ctx.Done()
		return ctx.Err()
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "slow"})
	done := waitState(t, st, tk.ID, task.Failed)
	if done.Attempt != 3 {
		t.Errorf("failed after %d attempts, want 3 (timeouts are never poison)", done.Attempt)
	}
	for _, a := range attempts(t, st, tk.ID) {
		if a.Outcome != task.OutcomeTimeout || a.Class != "transient" {
			t.Errorf("attempt %d: %s %s, want TIMEOUT transient", a.Number, a.Outcome, a.Class)
		}
	}
}

func TestStuckHandlerFreesItsSlot(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cfg := testConfig(st)
	cfg.Concurrency = 1
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Metrics = m
	release := make(chan struct{})
	defer close(release)
	e := start(t, cfg,
		Handler{Kind: "stuck", Policy: &retry.Never, Timeout: 50 * time.Millisecond, Fn: func(ctx context.Context, tk *task.Task) error {
			<-release // ignores its context
			return nil
		}},
		Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }})
	stuck := enqueue(t, st, task.NewTask{Kind: "stuck", Priority: 1})
	waitState(t, st, stuck.ID, task.Running)
	ok := enqueue(t, st, task.NewTask{Kind: "ok"})
	waitState(t, st, ok.ID, task.Success)
	done := waitState(t, st, stuck.ID, task.Failed)
	if e.Stats().Stuck.Load() != 1 || done.Attempt != 1 {
		t.Errorf("stuck count %d, attempts %d", e.Stats().Stuck.Load(), done.Attempt)
	}
	want := `
# HELP grit_stuck_attempts_total Attempts whose Go handler ignored the end of its context for the grace period: its slot was freed, its goroutine left running.
# TYPE grit_stuck_attempts_total counter
grit_stuck_attempts_total{kind="stuck",queue="default"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "grit_stuck_attempts_total"); err != nil {
		t.Error(err)
	}
}

// TestStuckAttemptEndsAfterItsTaskIsClaimedAgain loses an attempt's lease
// while its handler ignores its context, and lets the same engine claim the
// task again (a sibling took it over, then went silent) well within the
// stuck grace: the new attempt runs and succeeds beside the old one, and
// the watchdog must still end the old one and free its slot, though the
// task's place among the engine's running attempts is the new attempt's.
func TestStuckAttemptEndsAfterItsTaskIsClaimedAgain(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cfg := testConfig(st)
	cfg.Concurrency = 2
	cfg.StuckGrace = 2 * time.Second
	release := make(chan struct{})
	defer close(release)
	var calls counter
	e := start(t, cfg, Handler{Kind: "held", Fn: func(ctx context.Context, tk *task.Task) error {
		if calls.inc() == 1 {
			<-release // ignores the end of its context
		}
		return nil
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "held", Policy: "3 10ms"})
	waitState(t, st, tk.ID, task.Running)
	taken, err := st.Rescue(context.Background(), store.RescueRequest{Worker: "sibling", Owner: e.WorkerID(), Lease: 100 * time.Millisecond})
	if err != nil || len(taken) != 1 {
		t.Fatalf("rescue: %v, %d tasks", err, len(taken))
	}
	done := waitState(t, st, tk.ID, task.Success)
	if calls.get() != 2 || e.Stats().Stuck.Load() != 0 {
		t.Fatalf("success after %d calls with %d attempts ended as stuck; want the second call to succeed while the first still runs",
			calls.get(), e.Stats().Stuck.Load())
	}
	waitFor(t, 10*time.Second, func() bool { return e.Stats().Stuck.Load() == 1 && len(e.slots) == 0 },
		func() string {
			return fmt.Sprintf("%d attempts ended as stuck, %d slots held; want 1 and 0", e.Stats().Stuck.Load(), len(e.slots))
		})
	if got, _ := st.GetTask(context.Background(), tk.ID); got.State != task.Success || got.Attempt != done.Attempt {
		t.Errorf("after the stuck attempt ended the task is %s at attempt %d, want SUCCESS at %d", got.State, got.Attempt, done.Attempt)
	}
}

func TestSnoozeUsesNoAttempt(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	var calls counter
	start(t, testConfig(st), Handler{Kind: "sensor", Policy: &retry.Never, Fn: func(ctx context.Context, tk *task.Task) error {
		if calls.inc() < 4 {
			return Snooze(10 * time.Millisecond)
		}
		return nil
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "sensor"})
	done := waitState(t, st, tk.ID, task.Success)
	if done.Attempt != 1 || calls.get() != 4 {
		t.Errorf("attempt %d after %d calls; want 1 and 4 (snoozes use no attempt)", done.Attempt, calls.get())
	}
}

// TestMaxSnoozesFailsTheTask: a sensor that never stops snoozing ends
// FAILED at its handler's bound, with an error that says so, after as
// many snoozes as the bound and one attempt.
func TestMaxSnoozesFailsTheTask(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	var calls counter
	start(t, testConfig(st), Handler{Kind: "sensor", MaxSnoozes: 3, Fn: func(ctx context.Context, tk *task.Task) error {
		calls.inc()
		return Snooze(time.Millisecond)
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "sensor"})
	done := waitState(t, st, tk.ID, task.Failed)
	if done.Attempt != 1 || done.Snoozes != 3 || calls.get() != 4 {
		t.Errorf("attempt %d, %d snoozes, %d calls; want 1, 3 and 4", done.Attempt, done.Snoozes, calls.get())
	}
	if !strings.Contains(done.LastError, "after 3 snoozes") || !strings.Contains(done.LastError, "max_snoozes (3)") {
		t.Errorf("error %q does not say the bound was reached", done.LastError)
	}
	as := attempts(t, st, tk.ID)
	if last := as[len(as)-1]; last.Outcome != task.OutcomeError || last.Class != "permanent" {
		t.Errorf("last attempt %+v, want an ERROR of class permanent", last)
	}
}

func TestResourceUsesResourceBackoff(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	p := retry.MustParse("5 10ms")
	p.Resource = retry.Constant{Interval: 300 * time.Millisecond}
	var calls counter
	start(t, testConfig(st), Handler{Kind: "full", Policy: &p, Fn: func(ctx context.Context, tk *task.Task) error {
		if calls.inc() == 1 {
			return retry.Resource(errors.New("0/3 nodes are available: insufficient cpu"))
		}
		return nil
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "full"})
	waitState(t, st, tk.ID, task.Success)
	as := attempts(t, st, tk.ID)
	if as[0].Class != "resource" || as[0].Delay != 300*time.Millisecond {
		t.Errorf("first attempt %s delay %v; want resource, 300ms", as[0].Class, as[0].Delay)
	}
}

func TestUnknownPolicyStringFallsBack(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st), Handler{Kind: "x", Fn: func(context.Context, *task.Task) error { return retry.Permanent(errors.New("no")) }})
	tk := enqueue(t, st, task.NewTask{Kind: "x", Policy: "3 1s"})
	waitState(t, st, tk.ID, task.Failed)
}

func TestGracefulStopReleasesWithoutUsingAnAttempt(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	started := make(chan struct{})
	e, err := New(testConfig(st))
	if err != nil {
		t.Fatal(err)
	}
	e.Register(Handler{Kind: "long", Fn: func(ctx context.Context, tk *task.Task) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}})
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	tk := enqueue(t, st, task.NewTask{Kind: "long"})
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // release at once
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := st.GetTask(context.Background(), tk.ID)
	if got.State != task.Ready || got.Attempt != 0 {
		t.Errorf("after stop: %s attempt %d; want READY attempt 0", got.State, got.Attempt)
	}
	ws, _ := st.Workers(context.Background())
	for _, w := range ws {
		if w.ID == e.WorkerID() && w.Active {
			t.Error("the stopped worker is still active")
		}
	}
}

func TestStopDrainsRunningAttempts(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	e, _ := New(testConfig(st))
	started := make(chan struct{})
	finish := make(chan struct{})
	e.Register(Handler{Kind: "work", Fn: func(ctx context.Context, tk *task.Task) error {
		close(started)
		<-finish
		return nil
	}})
	e.Start(context.Background())
	tk := enqueue(t, st, task.NewTask{Kind: "work"})
	<-started
	stopped := make(chan error)
	go func() { stopped <- e.Stop(context.Background()) }()
	close(finish)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetTask(context.Background(), tk.ID); got.State != task.Success {
		t.Errorf("drained task is %s, want SUCCESS", got.State)
	}
}

// TestLostLeaseCancelsTheAttempt takes a running task away from the engine
// (as a sibling's rescue would) and checks the handler's context is
// cancelled with task.ErrLeaseLost and its late result rejected.
func TestLostLeaseCancelsTheAttempt(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cause := make(chan error, 1)
	e := start(t, testConfig(st), Handler{Kind: "held", Fn: func(ctx context.Context, tk *task.Task) error {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return nil // a late success, which must be rejected
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "held"})
	waitState(t, st, tk.ID, task.Running)
	taken, err := st.Rescue(context.Background(), store.RescueRequest{Worker: "sibling", Owner: e.WorkerID(), Lease: time.Minute})
	if err != nil || len(taken) != 1 {
		t.Fatalf("rescue: %v, %d tasks", err, len(taken))
	}
	select {
	case c := <-cause:
		if !errors.Is(c, task.ErrLeaseLost) {
			t.Errorf("cancel cause %v, want ErrLeaseLost", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler was not cancelled after its lease was lost")
	}
	waitFor(t, 10*time.Second, func() bool { return e.Stats().LeaseLost.Load() == 1 },
		func() string { return fmt.Sprint("lease-lost count ", e.Stats().LeaseLost.Load()) })
	if got, _ := st.GetTask(context.Background(), tk.ID); got.State != task.Running || got.LeaseOwner != "sibling" {
		t.Errorf("task %s owned by %q; the late result must not have been recorded", got.State, got.LeaseOwner)
	}
}

// TestRescueOfExpiredLeases claims tasks for a worker that then dies (it
// never heartbeats), and checks the engine takes them over once their
// leases expire and works them.
func TestRescueOfExpiredLeases(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	for range 3 {
		enqueue(t, st, task.NewTask{Kind: "w", Policy: "3 10ms"})
	}
	claimed, err := st.Claim(context.Background(), store.ClaimRequest{Worker: "dead", Limit: 10, Lease: 300 * time.Millisecond})
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claim: %v, %d", err, len(claimed))
	}
	e := start(t, testConfig(st), Handler{Kind: "w", Fn: func(context.Context, *task.Task) error { return nil }})
	for _, c := range claimed {
		done := waitState(t, st, c.ID, task.Success)
		if done.Attempt != 2 {
			t.Errorf("task %d: attempt %d, want 2 (one interrupted, one run)", c.ID, done.Attempt)
		}
		if as := attempts(t, st, c.ID); as[0].Outcome != task.OutcomeInterrupted {
			t.Errorf("task %d: first attempt %s, want INTERRUPTED", c.ID, as[0].Outcome)
		}
	}
	if e.Stats().Rescued.Load() != 3 {
		t.Errorf("rescued %d, want 3", e.Stats().Rescued.Load())
	}
}

func TestDAGPropagatesFailure(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st),
		Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }},
		Handler{Kind: "fail", Fn: func(context.Context, *task.Task) error { return retry.Permanent(errors.New("no")) }})
	r, err := st.SubmitRun(context.Background(), task.NewRun{Name: "dag", Tasks: []task.NewTask{
		{Name: "a", Kind: "ok"},
		{Name: "b", Kind: "fail", Needs: []string{"a"}},
		{Name: "c", Kind: "ok", Needs: []string{"b"}},
		{Name: "d", Kind: "ok", Needs: []string{"c"}},
		{Name: "e", Kind: "ok", Needs: []string{"a"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() bool {
		got, _ := st.GetRun(context.Background(), r.ID)
		return got.State.Terminal()
	}, func() string { return "run did not end" })
	ts, _ := st.ListTasks(context.Background(), task.Filter{RunID: r.ID})
	want := map[string]task.State{"a": task.Success, "b": task.Failed, "c": task.UpstreamFailed, "d": task.UpstreamFailed, "e": task.Success}
	for _, tk := range ts {
		if tk.State != want[tk.Name] {
			t.Errorf("%s: %s, want %s", tk.Name, tk.State, want[tk.Name])
		}
	}
	if got, _ := st.GetRun(context.Background(), r.ID); got.State != task.Failed {
		t.Errorf("run %s, want FAILED", got.State)
	}
}

// TestRepeatedTimeoutsSayTheTimeoutMayBeTheBug runs a kind that succeeds in
// about 100ms, then a task of the kind with a 30ms timeout: from its second
// timeout on, its error says the timeout may be the bug, beside the p99 of
// the successful runs.
func TestRepeatedTimeoutsSayTheTimeoutMayBeTheBug(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	start(t, testConfig(st), Handler{Kind: "report", Policy: policy("2 10ms"), Fn: func(ctx context.Context, tk *task.Task) error {
		select {
		case <-time.After(100 * time.Millisecond):
			return ctx.Err() // nil, unless a busy machine woke it with both ready
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	for range 3 {
		waitState(t, st, enqueue(t, st, task.NewTask{Kind: "report"}).ID, task.Success)
	}
	tk := enqueue(t, st, task.NewTask{Kind: "report", Timeout: 30 * time.Millisecond})
	done := waitState(t, st, tk.ID, task.Failed)
	as := attempts(t, st, tk.ID)
	if strings.Contains(as[0].Error, "may be the bug") {
		t.Errorf("the first timeout already blames the timeout: %q", as[0].Error)
	}
	want := "timed out 3 times in a row: the timeout (30ms) may be the bug; its successful runs took p99 "
	if !strings.Contains(done.LastError, want) || !strings.Contains(done.LastError, "(3 runs)") || !strings.Contains(as[1].Error, "2 times in a row") {
		t.Errorf("errors %q / %q; want %q … (3 runs)", as[1].Error, done.LastError, want)
	}
}

// TestRestartUnderTheSameIdentityReleasesAtOnce claims tasks for a worker
// id whose process is gone, with a long lease, then starts an engine under
// that id: it takes the tasks over at once instead of after the lease.
func TestRestartUnderTheSameIdentityReleasesAtOnce(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st.RegisterWorker(ctx, task.Worker{ID: "worker-7", Host: host, PID: dead.Process.Pid, StartedAt: time.Now(), LastSeen: time.Now(), Active: true})
	for range 2 {
		enqueue(t, st, task.NewTask{Kind: "w", Policy: "3 10ms"})
	}
	held, err := st.Claim(ctx, store.ClaimRequest{Worker: "worker-7", Limit: 10, Lease: time.Hour})
	if err != nil || len(held) != 2 {
		t.Fatalf("claim: %v, %d", err, len(held))
	}
	cfg := testConfig(st)
	cfg.WorkerID = "worker-7"
	start(t, cfg, Handler{Kind: "w", Fn: func(context.Context, *task.Task) error { return nil }})
	for _, h := range held {
		if done := waitState(t, st, h.ID, task.Success); done.Attempt != 2 {
			t.Errorf("task %d: attempt %d, want 2", h.ID, done.Attempt)
		}
	}
}

func TestTwoLiveWorkersCannotShareAnIdentity(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cfg := testConfig(st)
	cfg.WorkerID = "same"
	start(t, cfg)
	host, _ := os.Hostname()
	// Another live process (this test's parent will do) claims the identity.
	st.RegisterWorker(context.Background(), task.Worker{ID: "same", Host: host, PID: os.Getppid(), StartedAt: time.Now(), LastSeen: time.Now(), Active: true})
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "is in use by process") {
		t.Errorf("Start = %v, want the identity refused", err)
	}
}

// failingClaims is a real store whose first claims fail, as a store that
// is restarting would.
type failingClaims struct {
	*sqlite.Store
	mu   sync.Mutex
	left int
}

func (f *failingClaims) Claim(ctx context.Context, req store.ClaimRequest) ([]task.Task, error) {
	f.mu.Lock()
	fail := f.left > 0
	if fail {
		f.left--
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("database is restarting")
	}
	return f.Store.Claim(ctx, req)
}

// TestClaimLoopSurvivesStoreErrors fails the first claims: the loop keeps
// trying with backoff, works the task once claims succeed, and the worker's
// record shows the last claim error with its failures back at 0.
func TestClaimLoopSurvivesStoreErrors(t *testing.T) {
	t.Parallel()
	st := newSQLite(t)
	f := &failingClaims{Store: st, left: 3}
	cfg := testConfig(f)
	e := start(t, cfg, Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }})
	tk := enqueue(t, st, task.NewTask{Kind: "ok"})
	waitState(t, st, tk.ID, task.Success)
	// The recovery is recorded right after the claim that succeeded, which
	// can be after the task it claimed has ended.
	var me task.Worker
	waitFor(t, 10*time.Second, func() bool {
		ws, err := st.Workers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.ID == e.WorkerID() {
				me = w
			}
		}
		return me.Failures == 0 && me.LastError != ""
	}, func() string { return fmt.Sprintf("worker record %+v", me) })
	if me.LastError != "database is restarting" || me.LastErrorAt.IsZero() {
		t.Errorf("worker record %+v; want the last claim error kept", me)
	}
	if msg, n := e.Stats().LastPollError(); msg != "database is restarting" || n != 0 {
		t.Errorf("stats: last error %q, %d failures", msg, n)
	}
}

// TestRetriesKeepTimeWithASkewedStoreClock runs on a store whose clock is an
// hour ahead of this machine's, as a database server's may be: a retry
// 200ms away still waits about 200ms, neither firing at once (due times
// read on the wrong clock would be an hour in the past) nor an hour late.
func TestRetriesKeepTimeWithASkewedStoreClock(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{time.Hour, -time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			st, err := sqlite.OpenConfig(context.Background(), sqlite.Config{
				Path: filepath.Join(t.TempDir(), "grit.db"),
				Now:  func() time.Time { return time.Now().Add(skew) },
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			var mu sync.Mutex
			var calls []time.Time
			start(t, testConfig(st), Handler{Kind: "k", Policy: policy("2 200ms"), Fn: func(context.Context, *task.Task) error {
				mu.Lock()
				defer mu.Unlock()
				calls = append(calls, time.Now())
				if len(calls) == 1 {
					return retry.Transient(errors.New("once"))
				}
				return nil
			}})
			tk := enqueue(t, st, task.NewTask{Kind: "k"})
			waitState(t, st, tk.ID, task.Success)
			mu.Lock()
			defer mu.Unlock()
			if gap := calls[1].Sub(calls[0]); gap < 150*time.Millisecond {
				t.Errorf("the retry came %v after the failure, before its 200ms delay", gap)
			}
		})
	}
}
