package grit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// The isolated handlers' tests run this test binary as the children
// (grit.IsChild, from TestMain) and, for the worker killed with SIGKILL,
// as the worker too (isolatedWorkerEnv).

// isolatedWorkerEnv runs this test binary as a worker of isolated
// handlers on the store GRIT_STORE.
const isolatedWorkerEnv = "GRIT_TEST_ISOLATED_WORKER"

// isolatedProcess is main for this test binary as an isolated handler's
// child, or as a worker of isolated handlers.
func isolatedProcess() int {
	ctx := context.Background()
	if grit.IsChild() {
		c, err := grit.Open(ctx, "sqlite:never-opened.db", grit.Config{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		registerIsolated(c)
		c.Start(ctx) // serves the worker; it does not return
		fmt.Fprintln(os.Stderr, "Start returned in a child")
		return 1
	}
	c, err := grit.Open(ctx, os.Getenv("GRIT_STORE"), grit.Config{Lease: 2 * time.Second, WorkerID: "isolated-worker"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	registerIsolated(c)
	if err := c.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("started")
	select {}
}

// registerIsolated registers the tests' handlers, isolated, on c: in the
// worker and in its children alike, as a program does.
func registerIsolated(c *grit.Client) {
	never := grit.HandlerConfig{Isolate: true, Policy: "never"}
	grit.Handle(c, "iso.noop", func(context.Context, struct{}) error { return nil }, never)
	// iso.noop's in-process twin, for BenchmarkNoopAttempt.
	grit.Handle(c, "inproc.noop", func(context.Context, struct{}) error { return nil }, grit.HandlerConfig{Policy: "never"})
	grit.Handle(c, "iso.hang", func(_ context.Context, in struct{ Mark string }) error {
		if in.Mark != "" {
			os.WriteFile(in.Mark, nil, 0o644) // it runs
		}
		select {}
	}, never)
	grit.Handle(c, "iso.exit", func(context.Context, struct{}) error { os.Exit(3); return nil }, never)
	grit.Handle(c, "iso.import", importRows, grit.HandlerConfig{Isolate: true, Policy: "never", Quarantine: grit.QuarantinePolicy{Kind: "import.row", MaxShare: 0.1}})
	grit.Handle(c, "iso.next", func(ctx context.Context, _ struct{}) error { return grit.Next(ctx, "done", nil) }, never)
	grit.Handle(c, "iso.gopanic", func(context.Context, struct{}) error {
		go func() { panic("boom on a goroutine of its own") }()
		select {}
	}, never)
	grit.Handle(c, "iso.alloc", func(context.Context, struct{}) error {
		var hoard [][]byte
		for {
			b := make([]byte, 8<<20)
			for i := range b {
				b[i] = 1
			}
			hoard = append(hoard, b)
		}
	}, never)
	// Not isolated by itself: by Isolation.All.
	grit.Handle(c, "iso.pid", func(ctx context.Context, _ struct{}) error {
		_, err := grit.Step(ctx, "pid", func(context.Context) (int, error) { return os.Getpid(), nil })
		return err
	}, grit.HandlerConfig{})
	grit.Handle(c, "iso.info", func(ctx context.Context, in struct{ Order string }) error {
		a, ok := grit.AttemptFrom(ctx)
		if !ok {
			return errors.New("no attempt in the handler's context")
		}
		_, deadline := ctx.Deadline()
		res, err := grit.Step(ctx, "charge", func(context.Context) (string, error) {
			return fmt.Sprintf("%s pid=%d attempt=%d token=%d deadline=%v", in.Order, os.Getpid(), a.Number, a.LeaseToken, deadline), nil
		})
		if err != nil {
			return err
		}
		if err := grit.Publish(ctx, "charged", map[string]string{"charge": res}); err != nil {
			return err
		}
		if a.Number == 1 {
			return retry.Transient(errors.New("the bank is unavailable"))
		}
		return nil
	}, grit.HandlerConfig{Isolate: true, Policy: "3 10ms", Timeout: time.Minute})
}

func openIsolated(t *testing.T, iso grit.Isolation) *grit.Client {
	t.Helper()
	c, err := grit.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"), grit.Config{Concurrency: 4, Isolation: iso})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	registerIsolated(c)
	return c
}

func enqueueKind(t *testing.T, c *grit.Client, kind string, args any, opts ...grit.EnqueueOption) int64 {
	t.Helper()
	tk, err := c.Enqueue(context.Background(), kind, args, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tk.ID
}

func lastAttempt(t *testing.T, c *grit.Client, id int64) task.Attempt {
	t.Helper()
	as, err := c.Attempts(context.Background(), id)
	if err != nil || len(as) == 0 {
		t.Fatalf("attempts of %d: %v, %v", id, as, err)
	}
	return as[len(as)-1]
}

// childrenOf are the live processes that are isolated handlers'
// children of the process ppid.
func childrenOf(t *testing.T, ppid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains(string(env), "GRIT_ISOLATED_CHILD=") {
			continue
		}
		if state, parent := procStat(pid); state != "" && state != "Z" && parent == ppid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procStat is pid's state and parent, from /proc; "" when it is gone.
func procStat(pid int) (state string, ppid int) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(f) < 2 {
		return "", 0
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid
}

// TestIsolatedNextSaysWhy: grit.Next in an isolated handler fails its
// task permanently, saying why and what to do, rather than crash the
// child (the instance is the worker's to move).
func TestIsolatedNextSaysWhy(t *testing.T) {
	c := openIsolated(t, grit.Isolation{})
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(context.Background()) })
	id := enqueueKind(t, c, "iso.next", struct{}{})
	poll.Until(t, time.Minute, "iso.next to end", func() bool {
		tk, err := c.Task(context.Background(), id)
		return err == nil && tk.State.Terminal()
	})
	tk, _ := c.Task(context.Background(), id)
	if a := lastAttempt(t, c, id); tk.State != task.Failed || !strings.Contains(a.Error, "cannot ask for the next event") || !strings.Contains(a.Error, "HandlerConfig.Isolate") {
		t.Errorf("task %s, last attempt %q: want FAILED at once, saying an isolated handler cannot ask for the next event", tk.State, a.Error)
	}
}

// TestIsolatedHangIsKilled: an isolated handler that never returns and
// ignores its context is cut off by its timeout and the grace: its
// process is killed, the attempt is a timeout (not stuck), the worker's
// goroutines come back to what they were, and the slot works the next
// task.
func TestIsolatedHangIsKilled(t *testing.T) {
	c := openIsolated(t, grit.Isolation{})
	startClient(t, c)
	// A child is started and warm before the count is taken.
	waitTaskFor(t, c, enqueueKind(t, c, "iso.noop", struct{}{}), task.Success, 30*time.Second)
	runtime.GC()
	before := runtime.NumGoroutine()
	var heap runtime.MemStats
	runtime.ReadMemStats(&heap)

	const timeout, grace = time.Second, time.Second
	begin := time.Now()
	id := enqueueKind(t, c, "iso.hang", struct{}{}, grit.WithTimeout(timeout), grit.WithGrace(grace))
	got := waitTaskFor(t, c, id, task.Failed, 30*time.Second)
	took := time.Since(begin)
	a := lastAttempt(t, c, id)
	if a.Outcome != task.OutcomeTimeout || strings.Contains(got.LastError, "stuck") {
		t.Errorf("attempt %s: %q, want a TIMEOUT, not stuck", a.Outcome, got.LastError)
	}
	if took < timeout+grace || took > timeout+grace+10*time.Second {
		t.Errorf("ended %v after its enqueue, want the timeout and the grace (%v) and little more", took, timeout+grace)
	}
	// The slot works the next task, in a new child.
	waitTaskFor(t, c, enqueueKind(t, c, "iso.noop", struct{}{}), task.Success, 30*time.Second)
	poll.Until(t, 10*time.Second, "the worker's goroutines to come back", func() bool {
		runtime.GC()
		return runtime.NumGoroutine() <= before
	})
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(heap.HeapAlloc); grew > 8<<20 {
		t.Errorf("the worker's heap grew by %d bytes over a hung handler", grew)
	}
	if n := len(childrenOf(t, os.Getpid())); n > 4 {
		t.Errorf("%d children alive, want at most the concurrency", n)
	}
}

// TestIsolatedCrashesEndTheirOwnAttempt: an isolated handler that calls
// os.Exit, one that panics on a goroutine of its own and one that
// allocates without end each fail their own attempt, saying how their
// process died, while the worker works other tasks to success at the
// same time.
func TestIsolatedCrashesEndTheirOwnAttempt(t *testing.T) {
	c := openIsolated(t, grit.Isolation{MemoryLimit: 256 << 20})
	startClient(t, c)
	crashes := map[string]string{
		"iso.exit":    "isolated handler's process exited with status 3",
		"iso.gopanic": "panic: boom on a goroutine of its own",
		"iso.alloc":   "over its limit of 256 MiB",
	}
	ids := map[string]int64{}
	var noops []int64
	for kind := range crashes {
		ids[kind] = enqueueKind(t, c, kind, struct{}{})
		noops = append(noops, enqueueKind(t, c, "iso.noop", struct{}{}))
	}
	for kind, says := range crashes {
		got := waitTaskFor(t, c, ids[kind], task.Failed, time.Minute)
		if a := lastAttempt(t, c, ids[kind]); !strings.Contains(got.LastError, says) || a.Outcome != task.OutcomeError {
			t.Errorf("%s: %s %q, want an error saying %q", kind, a.Outcome, got.LastError, says)
		}
	}
	for _, id := range noops {
		waitTaskFor(t, c, id, task.Success, time.Minute)
	}
	// The worker goes on: another round of work succeeds.
	waitTaskFor(t, c, enqueueKind(t, c, "iso.noop", struct{}{}), task.Success, 30*time.Second)
}

// TestIsolatedHandlerHasItsContext: an isolated handler's context has its
// attempt, a deadline, durable steps (recorded by the worker, replayed on
// the retry) and publishing; a transient failure crosses the process
// boundary as transient.
func TestIsolatedHandlerHasItsContext(t *testing.T) {
	c := openIsolated(t, grit.Isolation{})
	if err := c.Subscribe(context.Background(), task.Subscription{Topic: "charged", Kind: "iso.noop", Queue: "default"}); err != nil {
		t.Fatal(err)
	}
	startClient(t, c)
	id := enqueueKind(t, c, "iso.info", struct{ Order string }{"A-17"})
	got := waitTaskFor(t, c, id, task.Success, 30*time.Second)
	as, err := c.Attempts(context.Background(), id)
	if err != nil || len(as) != 2 || as[0].Class != retry.ClassTransient.String() || got.Attempt != 2 {
		t.Fatalf("attempts %+v (%v), want a transient failure, then a success", as, err)
	}
	ss := stepsOf(t, c, id)
	want := fmt.Sprintf("A-17 pid=%%d attempt=1 token=%d deadline=true", as[0].LeaseToken)
	var pid int
	if len(ss) != 1 || ss[0].Attempt != 1 {
		t.Fatalf("steps %+v, want the charge, recorded by attempt 1", ss)
	}
	var res string
	if err := json.Unmarshal(ss[0].Result, &res); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscanf(res, want, &pid); err != nil || pid == os.Getpid() {
		t.Errorf("the step's result %q, want %q from another process than the worker (%d)", res, want, os.Getpid())
	}
	deliveries, err := c.Tasks(context.Background(), task.Filter{Kind: "iso.noop"})
	if err != nil || len(deliveries) != 1 || !strings.Contains(string(deliveries[0].Args), "A-17 pid=") {
		t.Errorf("deliveries of charged: %+v (%v), want one, from the success alone, carrying the replayed charge", deliveries, err)
	}
}

// startIsolatedWorker runs this test binary as a worker of isolated
// handlers on dsn (lease 2s) and returns it once it has started.
func startIsolatedWorker(t *testing.T, dsn string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), isolatedWorkerEnv+"=1", "GRIT_STORE="+dsn)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "started" {
		t.Fatalf("the worker said %q", sc.Text())
	}
	return cmd
}

// hangInAChild enqueues a task that hangs, on dsn, and returns the
// worker's children once one runs its handler.
func hangInAChild(t *testing.T, c *grit.Client, worker *exec.Cmd) []int {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "hanging")
	enqueueKind(t, c, "iso.hang", struct{ Mark string }{mark})
	poll.Until(t, 30*time.Second, "the handler to run in a child", func() bool {
		_, err := os.Stat(mark)
		return err == nil
	})
	kids := childrenOf(t, worker.Process.Pid)
	if len(kids) == 0 {
		t.Fatal("the handler runs, but the worker has no child")
	}
	return kids
}

// gone says whether every pid has exited (a zombie has).
func gone(pids []int) bool {
	for _, pid := range pids {
		if state, _ := procStat(pid); state != "" && state != "Z" {
			return false
		}
	}
	return true
}

// TestIsolatedWorkerKilledLeavesNoChild: a worker killed with SIGKILL
// takes its isolated handlers' children with it.
func TestIsolatedWorkerKilledLeavesNoChild(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "grit.db")
	c := openDSN(t, dsn, grit.Config{})
	worker := startIsolatedWorker(t, dsn)
	kids := hangInAChild(t, c, worker)
	t.Logf("the worker %d has the children %v", worker.Process.Pid, kids)
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	worker.Wait()
	poll.Until(t, 10*time.Second, fmt.Sprintf("the children %v to die with their worker", kids), func() bool { return gone(kids) })
}

// TestIsolatedChildOfAFrozenWorkerEndsWithinALease: a worker frozen
// with SIGSTOP cannot kill anything, and its lease lapses; its child,
// hearing nothing from it for a lease, ends itself and its attempt, so
// that it does not work on beside the sibling that takes the task over.
func TestIsolatedChildOfAFrozenWorkerEndsWithinALease(t *testing.T) {
	const lease = 2 * time.Second // the worker's (isolatedProcess)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "grit.db")
	c := openDSN(t, dsn, grit.Config{})
	worker := startIsolatedWorker(t, dsn)
	kids := hangInAChild(t, c, worker)
	if err := worker.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { worker.Process.Signal(syscall.SIGCONT) })
	frozen := time.Now()
	poll.Until(t, lease+10*time.Second, fmt.Sprintf("the children %v of a frozen worker to end", kids), func() bool { return gone(kids) })
	if took := time.Since(frozen); took < lease/2 {
		t.Errorf("the child ended %v after its worker froze, before a lease (%v) of silence", took, lease)
	}
}

// TestIsolatedChildrenAreRecycled: with Isolation.All every handler runs
// in a child, and a child is replaced after MaxAttempts attempts.
func TestIsolatedChildrenAreRecycled(t *testing.T) {
	c := openIsolated(t, grit.Isolation{All: true, MaxAttempts: 2})
	startClient(t, c)
	var pids []int
	for range 5 {
		id := enqueueKind(t, c, "iso.pid", struct{}{})
		waitTaskFor(t, c, id, task.Success, 30*time.Second)
		ss := stepsOf(t, c, id)
		var pid int
		if len(ss) != 1 || json.Unmarshal(ss[0].Result, &pid) != nil {
			t.Fatalf("steps %+v", ss)
		}
		pids = append(pids, pid)
	}
	if pids[0] == os.Getpid() || pids[0] != pids[1] || pids[1] == pids[2] || pids[2] != pids[3] || pids[3] == pids[4] {
		t.Errorf("attempts ran in %v (the worker is %d), want each child to work two, one after the other", pids, os.Getpid())
	}
}

// TestIsolatedChildThatNeverServes: a child command that exits at once,
// and one that never says it is ready, each fail the attempt saying so.
func TestIsolatedChildThatNeverServes(t *testing.T) {
	for _, tc := range []struct {
		name string
		iso  grit.Isolation
		says string
	}{
		{"exits", grit.Isolation{Command: []string{"/bin/sh", "-c", "exit 7"}}, "ended before it was ready: exited with status 7"},
		{"hangs", grit.Isolation{Command: []string{"/bin/sleep", "60"}, StartTimeout: 300 * time.Millisecond}, "was not ready within 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openIsolated(t, tc.iso)
			startClient(t, c)
			got := waitTaskFor(t, c, enqueueKind(t, c, "iso.noop", struct{}{}), task.Failed, 30*time.Second)
			if !strings.Contains(got.LastError, tc.says) {
				t.Errorf("error %q, want it to say %q", got.LastError, tc.says)
			}
		})
	}
}

// TestChildClientRefusesClearly: in a child, the client's other calls
// say that the process is a child, instead of failing somewhere deep.
func TestChildClientRefusesClearly(t *testing.T) {
	t.Setenv("GRIT_ISOLATED_CHILD", "3") // not taken before Start, which this test does not call
	dir := t.TempDir()
	c, err := grit.Open(context.Background(), "sqlite:"+filepath.Join(dir, "never.db"), grit.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sub := task.Subscription{Topic: "charged", Kind: "iso.noop"}
	calls := map[string]func() error{
		"Enqueue":     func() error { _, err := c.Enqueue(ctx, "iso.noop", struct{}{}); return err },
		"EnqueueTx":   func() error { _, err := c.EnqueueTx(ctx, nil, "iso.noop", struct{}{}); return err },
		"Task":        func() error { _, err := c.Task(ctx, 1); return err },
		"Publish":     func() error { _, err := c.Publish(ctx, "charged", struct{}{}); return err },
		"PublishTx":   func() error { _, err := c.PublishTx(ctx, nil, "charged", struct{}{}); return err },
		"Subscribe":   func() error { return c.Subscribe(ctx, sub) },
		"Unsubscribe": func() error { return c.Unsubscribe(ctx, sub) },
		"Send":        func() error { _, err := c.Send(ctx, "order", "o-1", "paid", nil); return err },
		"Instance":    func() error { _, err := c.Instance(ctx, "order", "o-1"); return err },
		"EnqueueMany": func() error { _, err := c.EnqueueMany(ctx, []task.NewTask{{Kind: "iso.noop"}}); return err },
		"SubmitRun":   func() error { _, err := c.SubmitRun(ctx, task.NewRun{Name: "r"}); return err },
		"Tasks":       func() error { _, err := c.Tasks(ctx, task.Filter{}); return err },
		"Attempts":    func() error { _, err := c.Attempts(ctx, 1); return err },
		"Steps":       func() error { _, err := c.Steps(ctx, 1); return err },
		"Run":         func() error { _, err := c.Run(ctx, 1); return err },
		"RunByKey":    func() error { _, err := c.RunByKey(ctx, "k"); return err },
		"Act":         func() error { _, err := c.Act(ctx, 1, task.ActCancel); return err },
		"Workers":     func() error { _, err := c.Workers(ctx); return err },
	}
	for name, call := range calls {
		if err := call(); err == nil || !strings.Contains(err.Error(), "isolated handler's child") || !strings.Contains(err.Error(), "grit.IsChild") {
			t.Errorf("a child's client's %s: %v, want it to say the process is a child and what to guard", name, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a child opened the store: %v", entries)
	}
}

// TestIsolatedChildrenWarmAtStart: Isolation.Warm starts children with
// the worker, before any task: the first attempts find them ready.
func TestIsolatedChildrenWarmAtStart(t *testing.T) {
	c := openIsolated(t, grit.Isolation{Warm: 2})
	startClient(t, c)
	warm := childrenOf(t, os.Getpid())
	if len(warm) != 2 {
		t.Fatalf("children %v when Start returned, want two, ready", warm)
	}
	for range 3 {
		waitTaskFor(t, c, enqueueKind(t, c, "iso.noop", struct{}{}), task.Success, 30*time.Second)
	}
	if now := childrenOf(t, os.Getpid()); len(now) != 2 || !slices.Equal(slices.Sorted(slices.Values(now)), slices.Sorted(slices.Values(warm))) {
		t.Errorf("children %v after three tasks one after the other, want the warm ones, %v", now, warm)
	}
}

// TestIsolatedWarmChildThatCannotStartFailsStart: a warm child that
// cannot start fails Start, saying why, before anything is done in the
// store.
func TestIsolatedWarmChildThatCannotStartFailsStart(t *testing.T) {
	c := openIsolated(t, grit.Isolation{Warm: 1, Command: []string{"/bin/sh", "-c", "echo no main here >&2; exit 4"}})
	err := c.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exited with status 4: no main here") || !strings.Contains(err.Error(), "grit.IsChild") {
		t.Fatalf("Start: %v, want it to fail saying how the child ended", err)
	}
	if ws, _ := c.Workers(context.Background()); len(ws) != 0 {
		t.Errorf("a failed Start registered %v", ws)
	}
}
