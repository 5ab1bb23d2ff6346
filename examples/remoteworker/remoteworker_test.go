package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/internal/proctest"
	"github.com/grit-run/grit/store/sqlite"
)

// calls counts the calls the server answers, by method.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) count(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	c.mu.Lock()
	c.n[info.FullMethod]++
	c.mu.Unlock()
	return handler(ctx, req)
}

func (c *calls) of(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method]
}

// serve runs a grit server on a fresh SQLite store and returns its
// address, a Tasks client, and the count of the calls it answered.
func serve(t *testing.T, lease time.Duration) (string, pb.TasksServiceClient, *calls) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := server.New(server.Config{Store: st, Lease: lease, Rescue: 100 * time.Millisecond, Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &calls{n: map[string]int{}}
	gs := grpc.NewServer(append(s.ServerOptions(), grpc.ChainUnaryInterceptor(n.count))...)
	s.Register(gs)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Maintain(ctx) })
	wg.Go(func() { gs.Serve(lis) })
	t.Cleanup(func() { s.Stop(); gs.Stop(); cancel(); wg.Wait() })
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return lis.Addr().String(), pb.NewTasksServiceClient(conn), n
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// build compiles the worker once per test binary.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "remoteworker")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "remoteworker")
		out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

func startWorker(t *testing.T, addr, id string, lease time.Duration, flags ...string) *proctest.Proc {
	t.Helper()
	cmd := exec.Command(build(t), append([]string{"--server", addr, "--worker-id", id, "--lease", lease.String()}, flags...)...)
	return proctest.Start(t, id, cmd) // in a process group of its own, so that a kill takes its commands too
}

func waitState(t *testing.T, tc pb.TasksServiceClient, id int64, state pb.TaskState) *pb.Task {
	t.Helper()
	var resp *pb.GetResponse
	var err error
	poll.UntilSays(t, 30*time.Second, func() string { return fmt.Sprintf("task %d: %v (%v), want %s", id, resp.GetTask(), err, state) }, func() bool {
		resp, err = tc.Get(context.Background(), &pb.GetRequest{Id: id})
		return err == nil && resp.GetTask().GetState() == state
	})
	return resp.GetTask()
}

func enqueue(t *testing.T, tc pb.TasksServiceClient, cmd string) int64 {
	t.Helper()
	return enqueueWith(t, tc, cmd, "3 10ms")
}

func enqueueWith(t *testing.T, tc pb.TasksServiceClient, cmd, policy string) int64 {
	t.Helper()
	resp, err := tc.Enqueue(context.Background(), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "shell", Args: []byte(fmt.Sprintf(`{"cmd": %q}`, cmd)), Policy: policy}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetTask().GetId()
}

// TestRemoteWorkerEndToEnd: a worker built on the generated API alone
// completes a task, and a transient exit is retried by the task's policy.
func TestRemoteWorkerEndToEnd(t *testing.T) {
	t.Parallel()
	addr, tc, _ := serve(t, 3*time.Second)
	mark := filepath.Join(t.TempDir(), "tried")
	ok := enqueue(t, tc, "echo hello")
	flaky := enqueue(t, tc, fmt.Sprintf("[ -f %s ] || { touch %s; exit 75; }", mark, mark))
	startWorker(t, addr, "remote-a", 3*time.Second)
	if got := waitState(t, tc, ok, pb.TaskState_TASK_STATE_SUCCESS); got.GetAttempt() != 1 {
		t.Errorf("echo: attempt %d, want 1", got.GetAttempt())
	}
	if got := waitState(t, tc, flaky, pb.TaskState_TASK_STATE_SUCCESS); got.GetAttempt() != 2 {
		t.Errorf("exit 75 then 0: attempt %d, want 2", got.GetAttempt())
	}
	as, err := tc.Attempts(context.Background(), &pb.AttemptsRequest{TaskId: flaky})
	if err != nil || len(as.GetAttempts()) != 2 || as.GetAttempts()[0].GetErrorClass() != pb.ErrorClass_ERROR_CLASS_TRANSIENT || as.GetAttempts()[0].GetExitCode() != 75 {
		t.Errorf("attempts of the flaky task: %v (%v), want a transient exit 75, then a success", as.GetAttempts(), err)
	}
	resp, err := tc.Attempts(context.Background(), &pb.AttemptsRequest{TaskId: ok})
	if err != nil || len(resp.GetAttempts()) != 1 || !strings.Contains(resp.GetAttempts()[0].GetOutput(), "hello") {
		t.Errorf("attempts of echo: %v (%v), want its output kept", resp.GetAttempts(), err)
	}
}

// TestRemoteWorkerSendsItsPolicy: a worker started with --policy never has
// its failures of a task without a policy of its own decided by it: the
// task fails on its first attempt, where the default policy would retry.
// The task with a policy of its own is retried by it.
func TestRemoteWorkerSendsItsPolicy(t *testing.T) {
	t.Parallel()
	addr, tc, _ := serve(t, 3*time.Second)
	bare := enqueueWith(t, tc, "exit 3", "")
	own := enqueueWith(t, tc, "exit 3", "3 10ms")
	startWorker(t, addr, "remote-p", 3*time.Second, "--policy", "never")
	if got := waitState(t, tc, bare, pb.TaskState_TASK_STATE_FAILED); got.GetAttempt() != 1 {
		t.Errorf("task without a policy: FAILED at attempt %d, want 1 (the worker's policy: never)", got.GetAttempt())
	}
	// Its own policy retries; the same failure twice dead-letters it.
	if got := waitState(t, tc, own, pb.TaskState_TASK_STATE_DEAD_LETTER); got.GetAttempt() != 2 {
		t.Errorf("task with its own policy: DEAD_LETTER at attempt %d, want 2", got.GetAttempt())
	}
}

// TestRemoteWorkerKilledIsTakenOver: a remote worker killed with SIGKILL
// mid-task loses it by the lease rules: once its lease expires the server
// takes the task over, and a sibling works it again.
func TestRemoteWorkerKilledIsTakenOver(t *testing.T) {
	t.Parallel()
	const lease = 1500 * time.Millisecond
	addr, tc, _ := serve(t, lease)
	mark := filepath.Join(t.TempDir(), "started")
	id := enqueue(t, tc, fmt.Sprintf("[ -f %s ] && exit 0; touch %s; sleep 60", mark, mark))
	a := startWorker(t, addr, "remote-a", lease)
	a.Await(t, fmt.Sprintf("claimed %d attempt 1", id), 30*time.Second)
	poll.Until(t, 30*time.Second, "the worker's command to start", func() bool {
		_, err := os.Stat(mark)
		return err == nil
	})
	a.Signal(syscall.SIGKILL)
	killed := time.Now()
	b := startWorker(t, addr, "remote-b", lease)
	b.Await(t, fmt.Sprintf("claimed %d attempt 2", id), 30*time.Second)
	if took := time.Since(killed); took > lease+3*time.Second {
		t.Errorf("taken over %v after the kill, want within the lease (%v) and a rescue", took, lease)
	}
	got := waitState(t, tc, id, pb.TaskState_TASK_STATE_SUCCESS)
	as, err := tc.Attempts(context.Background(), &pb.AttemptsRequest{TaskId: id})
	if err != nil || len(as.GetAttempts()) != 2 || as.GetAttempts()[0].GetOutcome() != pb.AttemptOutcome_ATTEMPT_OUTCOME_INTERRUPTED ||
		as.GetAttempts()[0].GetWorker() != "remote-a" || as.GetAttempts()[1].GetWorker() != "remote-b" || got.GetAttempt() != 2 {
		t.Errorf("attempts %v (%v): want remote-a's INTERRUPTED, then remote-b's success", as.GetAttempts(), err)
	}
}

// TestRemoteWorkerReportsAClaimTogether: the results of the tasks a claim
// took go to the server in one Report call, none by Complete or Fail, and
// each is recorded: the successes, and the failure decided by its policy.
func TestRemoteWorkerReportsAClaimTogether(t *testing.T) {
	t.Parallel()
	addr, tc, n := serve(t, 3*time.Second)
	var ids []int64
	for i := range 4 {
		ids = append(ids, enqueue(t, tc, fmt.Sprintf("echo %d", i)))
	}
	failing := enqueueWith(t, tc, "exit 3", "never")
	w := startWorker(t, addr, "remote-r", 3*time.Second, "--batch", "5")
	w.Await(t, "reported 5 results in one call", 30*time.Second)
	for _, id := range ids {
		waitState(t, tc, id, pb.TaskState_TASK_STATE_SUCCESS)
	}
	waitState(t, tc, failing, pb.TaskState_TASK_STATE_FAILED)
	if r, c, f := n.of(pb.WorkersService_Report_FullMethodName), n.of(pb.WorkersService_Complete_FullMethodName), n.of(pb.WorkersService_Fail_FullMethodName); r != 1 || c != 0 || f != 0 {
		t.Errorf("%d Report, %d Complete and %d Fail calls for one claim of 5 tasks, want one Report", r, c, f)
	}
}
