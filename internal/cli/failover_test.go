package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// The failover test's bounds: from the standby's promotion, the workers
// (the same processes) finish a task within failoverResume, and every
// acknowledged task within failoverDrain.
const (
	failoverResume = 10 * time.Second
	failoverDrain  = 30 * time.Second
)

// TestFailoverToASynchronousStandby runs two grit worker processes and a
// stream of enqueues on a primary with a synchronous standby, through a
// DSN that names both (target_session_attrs=read-write), kills the
// primary with SIGKILL mid-stream and promotes the standby: at once, and
// once the outage has outlasted the workers' leases, so that they have
// given their attempts up. Every acknowledged enqueue must be on the new
// primary, every task must end SUCCESS with exactly one successful
// attempt, no task body may run more than twice (a claim commits without
// waiting, so the failover can lose it, and an attempt given up runs
// again), and the same worker processes must resume within failoverResume
// of the promotion and finish the work within failoverDrain.
func TestFailoverToASynchronousStandby(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts PostgreSQL clusters of its own; runs without -short")
	}
	for _, tt := range []struct {
		name       string
		leasesLost bool
	}{{"promoted at once", false}, {"promoted after the leases lapsed", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			failover(t, tt.leasesLost)
		})
	}
}

func failover(t *testing.T, leasesLost bool) {
	primary := pgtest.NewCluster(t)
	standby := primary.Standby(t, true)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write",
		primary.Port, standby.Port)
	if code, _, errOut := grit(t, "migrate", "--store", dsn); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, errOut)
	}
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	args, _ := json.Marshal(task.Exec{Shell: fmt.Sprintf(`echo "$GRIT_TASK_ID $GRIT_LEASE_TOKEN start" >> %[1]s; sleep 0.2; echo "$GRIT_TASK_ID $GRIT_LEASE_TOKEN end" >> %[1]s`, ledger)})
	workerArgs := []string{"worker", "--store", dsn, "--lease", "3s", "--heartbeat", "1s", "--concurrency", "4"}
	a, aOut := gritProcess(t, dir, append(workerArgs, "--worker-id", "a")...)
	b, bOut := gritProcess(t, dir, append(workerArgs, "--worker-id", "b")...)

	client, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	stream := startEnqueueStream(t, client, task.NewTask{Kind: task.KindExec, Args: args, Policy: "10 100ms 1s"}, 50*time.Millisecond)
	poll.Until(t, 60*time.Second, "30 tasks to succeed before the failover", func() bool { return countSuccess(client) >= 30 })

	inFlight := ledgerInFlight(t, ledger)
	const lost = "no heartbeat renewed the leases for a whole lease"
	aLost, bLost := strings.Count(aOut.String(), lost), strings.Count(bOut.String(), lost)
	primary.Kill(t)
	killed := time.Now()
	if leasesLost {
		poll.Until(t, 30*time.Second, "both workers to give their leases up to the outage", func() bool {
			return strings.Count(aOut.String(), lost) > aLost && strings.Count(bOut.String(), lost) > bLost
		})
	}
	standby.Promote(t)
	promoted := time.Now()
	atPromotion := stream.acknowledged()
	after, err := postgres.Open(t.Context(), fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", standby.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	doneAtPromotion := countSuccess(after)
	poll.Until(t, failoverResume+5*time.Second, "a task to succeed on the promoted standby", func() bool { return countSuccess(after) > doneAtPromotion })
	resumed := time.Since(promoted)
	poll.Until(t, 30*time.Second, "20 enqueues acknowledged by the promoted standby", func() bool { return len(stream.acknowledged()) >= len(atPromotion)+20 })
	acked, refused := stream.stop()
	// Every task there, acknowledged or not (an enqueue refused as the
	// primary died may have committed), to succeed.
	poll.Until(t, failoverDrain+5*time.Second, "every task to succeed", func() bool {
		return countSuccess(after) >= max(len(acked), countAll(after))
	})
	drained := time.Since(promoted)
	t.Logf("failover: %d enqueues acknowledged (%d before the promotion), %d refused during the outage; %d attempts running at the kill; "+
		"promotion %v after the kill; the workers resumed %v after the promotion and finished every task %v after it",
		len(acked), len(atPromotion), refused, inFlight, promoted.Sub(killed).Round(time.Millisecond), resumed.Round(time.Millisecond), drained.Round(time.Millisecond))
	if inFlight == 0 {
		t.Error("no attempt was running when the primary was killed: the test proves less than it should")
	}
	if resumed > failoverResume {
		t.Errorf("the workers resumed %v after the promotion, want within %v", resumed, failoverResume)
	}
	if drained > failoverDrain {
		t.Errorf("the workers finished the work %v after the promotion, want within %v", drained, failoverDrain)
	}
	for _, w := range []struct {
		cmd *exec.Cmd
		out *lockedBuffer
	}{{a, aOut}, {b, bOut}} {
		if w.cmd.ProcessState != nil {
			t.Errorf("a worker exited during the failover:\n%s", w.out)
		}
	}
	checkFailover(t, after, acked, ledgerRuns(t, ledger))
	for _, w := range []*exec.Cmd{a, b} {
		w.Process.Signal(syscall.SIGTERM)
	}
	waitExit(t, a, 30*time.Second, aOut)
	waitExit(t, b, 30*time.Second, bOut)
}

// checkFailover checks the invariants of a failover on the new primary:
// every acknowledged task there, every task SUCCESS once, run at most
// twice, by the workers a and b.
func checkFailover(t *testing.T, st store.Store, acked []int64, runs map[int64]int) {
	t.Helper()
	ts, err := st.ListTasks(t.Context(), task.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]task.Task{}
	for _, tk := range ts {
		byID[tk.ID] = tk
	}
	lost, twice := 0, 0
	for _, id := range acked {
		if _, ok := byID[id]; !ok {
			lost++
			t.Errorf("task %d: its enqueue was acknowledged, and the promoted standby does not have it", id)
		}
	}
	for _, tk := range ts {
		if tk.State != task.Success {
			t.Errorf("task %d ended %s (%s), want SUCCESS", tk.ID, tk.State, tk.LastError)
		}
		as, err := st.Attempts(t.Context(), tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		successes := 0
		for _, at := range as {
			if at.Outcome == task.OutcomeSuccess {
				successes++
				if at.Worker != "a" && at.Worker != "b" {
					t.Errorf("task %d succeeded on worker %q, want a or b, the workers started before the failover", tk.ID, at.Worker)
				}
			}
		}
		if successes != 1 {
			t.Errorf("task %d: %d successful attempts, want exactly 1: %+v", tk.ID, successes, as)
		}
		switch n := runs[tk.ID]; {
		case n == 0:
			t.Errorf("task %d: SUCCESS, and the ledger saw no run of it", tk.ID)
		case n == 2:
			twice++
		case n > 2:
			t.Errorf("task %d ran %d times, want at most twice", tk.ID, n)
		}
	}
	t.Logf("failover: %d tasks on the promoted standby, %d acknowledged ones lost, %d run twice", len(ts), lost, twice)
}

// ledgerInFlight counts the runs the ledger saw start and not end.
func ledgerInFlight(t *testing.T, ledger string) int {
	t.Helper()
	b, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == "start" {
			open[f[0]+" "+f[1]]++
		} else if len(f) == 3 {
			open[f[0]+" "+f[1]]--
		}
	}
	n := 0
	for _, v := range open {
		n += v
	}
	return n
}

// ledgerRuns counts the runs of each task the ledger saw start.
func ledgerRuns(t *testing.T, ledger string) map[int64]int {
	t.Helper()
	b, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[int64]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "start" {
			continue
		}
		id, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("ledger line %q", line)
		}
		runs[id]++
	}
	return runs
}

func countSuccess(st store.Store) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ts, err := st.ListTasks(ctx, task.Filter{States: []task.State{task.Success}})
	if err != nil {
		return -1
	}
	return len(ts)
}

// countAll counts the tasks of st, in any state (-1 when it does not
// answer).
func countAll(st store.Store) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ts, err := st.ListTasks(ctx, task.Filter{})
	if err != nil {
		return -1
	}
	return len(ts)
}

// enqueueStream enqueues one task every interval until stopped, keeping
// the ids of the enqueues the store acknowledged and counting those it
// refused.
type enqueueStream struct {
	mu      sync.Mutex
	acked   []int64
	refused int
	cancel  context.CancelFunc
	done    chan struct{}
}

func startEnqueueStream(t *testing.T, st store.Store, nt task.NewTask, every time.Duration) *enqueueStream {
	ctx, cancel := context.WithCancel(context.Background())
	s := &enqueueStream{cancel: cancel, done: make(chan struct{})}
	t.Cleanup(func() { s.stop() })
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			call, end := context.WithTimeout(ctx, 5*time.Second)
			res, err := st.Enqueue(call, []task.NewTask{nt})
			end()
			s.mu.Lock()
			if err == nil {
				s.acked = append(s.acked, res[0].ID)
			} else if ctx.Err() == nil {
				s.refused++
			}
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *enqueueStream) acknowledged() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.acked...)
}

// stop ends the stream and returns what it acknowledged and refused.
func (s *enqueueStream) stop() ([]int64, int) {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.acked...), s.refused
}
