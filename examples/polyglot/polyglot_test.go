// Package polyglot tests grit's example workers in other languages
// (examples/python, examples/node) against a real grit server: each
// language's worker and producer run as processes, and their output and
// the server's records say whether they keep the contract of
// docs/api.md's remote workers. A language registers itself in its own
// file (python_test.go); a language this machine cannot run skips loudly,
// and fails under CI=true.
package polyglot

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/internal/proctest"
)

// language is an example worker's language: how to run its worker and producer.
type language struct {
	// ready says why the language cannot run on this machine ("" when it can).
	ready func() string
	// worker is the command that runs one worker process.
	worker func(t *testing.T, server, id string, lease time.Duration) *exec.Cmd
	// producer is the command that runs the producer with extra args (such as --wait).
	producer func(t *testing.T, server string, args ...string) *exec.Cmd
}

// languages are registered by each language's file (python_test.go, node_test.go) in init.
var languages = map[string]language{}

const (
	// kind is the kind of the example workers' tasks.
	kind = "example.job"
	// token is the server's bearer token, which the workers and producers
	// send from GRIT_TOKEN.
	token = "polyglot-example-token-0123456789abcdef"
	// rescue is how often the server takes over expired leases.
	rescue = 200 * time.Millisecond
	// slack is what a loaded machine may add to any wait: an interpreter
	// starting, a process scheduled late.
	slack = 15 * time.Second
)

// scratch is a directory for what the test binary builds once (the grit
// binary, generated stubs), removed when it ends.
var scratch string

func TestMain(m *testing.M) {
	var err error
	if scratch, err = os.MkdirTemp("", "polyglot"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(scratch)
	os.Exit(code)
}

// built returns what build (a sync.OnceValues) made, and fails the test
// if it failed.
func built(t *testing.T, build func() (string, error)) string {
	t.Helper()
	out, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gritBinary builds the grit command from this module, once.
var gritBinary = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(scratch, "grit")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/grit")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/grit: %v\n%s", err, out)
	}
	return bin, nil
})

// server is a grit server process and a client of its TasksService.
type server struct {
	addr  string
	tasks pb.TasksServiceClient
}

// startServer runs `grit server` on a fresh SQLite store, on a port the
// system picks (read from its first line), with a token, and waits until
// its health service answers SERVING.
func startServer(t *testing.T) *server {
	t.Helper()
	cmd := exec.Command(built(t, gritBinary), "server", "--store", "sqlite:"+filepath.Join(t.TempDir(), "grit.db"),
		"--listen", "127.0.0.1:0", "--http", "off", "--rescue", rescue.String())
	cmd.Env = append(withoutGrit(os.Environ()), "GRIT_TOKENS="+token)
	p := proctest.Start(t, "grit server", cmd)
	const serving = "serving grit.v1 on"
	line := p.Await(t, serving, slack)
	addr, _, _ := strings.Cut(strings.TrimPrefix(line, serving+" "), " ")

	bearer := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), method, req, reply, cc, opts...)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUnaryInterceptor(bearer))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	health := healthpb.NewHealthClient(conn)
	poll.Until(t, slack, "the server's health service to answer SERVING", func() bool {
		resp, err := health.Check(t.Context(), &healthpb.HealthCheckRequest{})
		return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
	})
	return &server{addr: addr, tasks: pb.NewTasksServiceClient(conn)}
}

// withoutGrit is env without GRIT_ variables, so that the server's
// settings are the test's alone.
func withoutGrit(env []string) []string {
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GRIT_") })
}

// forEachLanguage runs test for each registered language, by name, as a
// parallel subtest. A language that is not ready skips loudly, or fails under
// CI=true.
func forEachLanguage(t *testing.T, test func(t *testing.T, lang language)) {
	if len(languages) == 0 {
		t.Fatal("no language registered")
	}
	for _, name := range slices.Sorted(maps.Keys(languages)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			lang := languages[name]
			if why := lang.ready(); why != "" {
				msg := fmt.Sprintf("the %s example cannot run on this machine: %s", name, why)
				if os.Getenv("CI") == "true" {
					t.Fatal(msg)
				}
				t.Skip("SKIPPING: " + msg)
			}
			test(t, lang)
		})
	}
}

// startWorker runs one of lang's workers against srv with the token.
func startWorker(t *testing.T, lang language, srv *server, id string, lease time.Duration) *proctest.Proc {
	t.Helper()
	cmd := lang.worker(t, srv.addr, id, lease)
	cmd.Env = append(cmd.Environ(), "GRIT_TOKEN="+token)
	return proctest.Start(t, "worker "+id, cmd)
}

// runProducer runs lang's producer against srv with the token and
// returns its output; it must exit 0.
func runProducer(t *testing.T, lang language, srv *server, args ...string) []string {
	t.Helper()
	cmd := lang.producer(t, srv.addr, args...)
	cmd.Env = append(cmd.Environ(), "GRIT_TOKEN="+token)
	return proctest.Run(t, "producer "+strings.Join(args, " "), cmd, time.Minute+slack)
}

// enqueue enqueues an example.job task with args, by the Go client.
func enqueue(t *testing.T, srv *server, args string) int64 {
	t.Helper()
	resp, err := srv.tasks.Enqueue(t.Context(), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: kind, Args: []byte(args)}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetTask().GetId()
}

// final waits up to within for task id to end and returns it.
func final(t *testing.T, srv *server, id int64, within time.Duration) *pb.Task {
	t.Helper()
	var task *pb.Task
	poll.Until(t, within, fmt.Sprintf("task %d to end", id), func() bool {
		resp, err := srv.tasks.Get(t.Context(), &pb.GetRequest{Id: id})
		task = resp.GetTask()
		return err == nil && slices.Contains(finalStates, task.GetState())
	})
	return task
}

// finalStates are the states a task does not leave by itself.
var finalStates = []pb.TaskState{pb.TaskState_TASK_STATE_SUCCESS, pb.TaskState_TASK_STATE_FAILED,
	pb.TaskState_TASK_STATE_DEAD_LETTER, pb.TaskState_TASK_STATE_CANCELLED, pb.TaskState_TASK_STATE_SKIPPED,
	pb.TaskState_TASK_STATE_UPSTREAM_FAILED}

// attempts returns the attempts of task id.
func attempts(t *testing.T, srv *server, id int64) []*pb.Attempt {
	t.Helper()
	resp, err := srv.tasks.Attempts(t.Context(), &pb.AttemptsRequest{TaskId: id})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetAttempts()
}

// outcomes says how each attempt ended, e.g. [ERROR/TRANSIENT SUCCESS].
func outcomes(as []*pb.Attempt) []string {
	var out []string
	for _, a := range as {
		o := strings.TrimPrefix(a.GetOutcome().String(), "ATTEMPT_OUTCOME_")
		if a.GetErrorClass() != pb.ErrorClass_ERROR_CLASS_UNSPECIFIED {
			o += "/" + strings.TrimPrefix(a.GetErrorClass().String(), "ERROR_CLASS_")
		}
		out = append(out, o)
	}
	return out
}

// seconds is d as a number of seconds, as the workers' flags and args
// take it.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// enqueued reads the producer's "enqueued ACTION ID [existed]" lines into
// ids by action; existed says whether each must say existed.
func enqueued(t *testing.T, out []string, existed bool) map[string]int64 {
	t.Helper()
	ids := map[string]int64{}
	for _, l := range out {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != "enqueued" {
			continue
		}
		id, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("the producer printed %q: %q is not an id", l, f[2])
		}
		ids[f[1]] = id
		if said := len(f) == 4 && f[3] == "existed"; said != existed {
			t.Errorf("the producer printed %q: existed %v, want %v", l, said, existed)
		}
	}
	if len(ids) != len(demo) {
		t.Fatalf("the producer printed %q: want an enqueued line for each of %v", out, demo)
	}
	return ids
}

// demo are the actions of the producer's demo set.
var demo = []string{"ok", "flaky", "reject", "later", "slow"}

// TestEndToEnd: the producer enqueues the demo set, one worker works it,
// and each task ends as its action says, by the producer's account, the
// worker's and the server's records. Enqueued again, the set is found by
// its idempotency keys.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	forEachLanguage(t, func(t *testing.T, lang language) {
		const lease = time.Second
		slow := seconds(3 * lease) // only heartbeats keep it
		srv := startServer(t)
		ids := enqueued(t, runProducer(t, lang, srv, "--slow", slow), false)
		w := startWorker(t, lang, srv, "e2e", lease)
		out := runProducer(t, lang, srv, "--slow", slow, "--wait")
		if again := enqueued(t, out, true); !maps.Equal(again, ids) {
			t.Errorf("enqueued again: %v, want the same tasks, %v", again, ids)
		}

		ends := []struct{ action, end string }{
			{"ok", "SUCCESS attempt 1"},
			{"flaky", "SUCCESS attempt 3"},
			{"reject", "FAILED attempt 1"}, // its policy would retry; PERMANENT does not
			{"later", "SUCCESS attempt 1"}, // a snooze uses no attempt
			{"slow", "SUCCESS attempt 1"},
		}
		for _, e := range ends {
			if line := fmt.Sprintf("%s %d %s", e.action, ids[e.action], e.end); !slices.Contains(out, line) {
				t.Errorf("producer --wait printed %q, want the line %q", out, line)
			}
		}

		records := []struct {
			action string
			want   []string
		}{
			{"ok", []string{"SUCCESS"}},
			{"flaky", []string{"ERROR/TRANSIENT", "ERROR/TRANSIENT", "SUCCESS"}},
			{"reject", []string{"ERROR/PERMANENT"}},
			{"later", []string{"SNOOZED", "SUCCESS"}}, // SENSING in between
			{"slow", []string{"SUCCESS"}},
		}
		for _, r := range records {
			if got := outcomes(attempts(t, srv, ids[r.action])); !slices.Equal(got, r.want) {
				t.Errorf("%s: attempts %v, want %v", r.action, got, r.want)
			}
		}
		if as := attempts(t, srv, ids["reject"]); len(as) > 0 && (as[0].GetDecision() != pb.Decision_DECISION_PERMANENT || as[0].GetError() != "the card was declined") {
			t.Errorf("reject: %v, %q, want DECISION_PERMANENT, %q", as[0].GetDecision(), as[0].GetError(), "the card was declined")
		}
		// Its policy, whichever way the producer gave it (the Python one as
		// RetryPolicy fields, the Node.js one as a string), is the same.
		for _, action := range []string{"flaky", "reject"} {
			resp, err := srv.tasks.Get(t.Context(), &pb.GetRequest{Id: ids[action]})
			if r := resp.GetTask().GetRetryPolicy(); err != nil || resp.GetTask().GetPolicy() != "5 100ms 1s" || r.GetMaxAttempts() != 6 ||
				r.GetBackoff().GetInitial().AsDuration() != 100*time.Millisecond || r.GetBackoff().GetMax().AsDuration() != time.Second {
				t.Errorf("%s: policy %q, %v (%v), want 5 100ms 1s both ways", action, resp.GetTask().GetPolicy(), r, err)
			}
		}
		if as := attempts(t, srv, ids["later"]); len(as) > 0 && as[0].GetDelay().AsDuration() != time.Second {
			t.Errorf("later: snoozed for %v, want 1s", as[0].GetDelay().AsDuration())
		}

		for _, l := range []struct{ action, format string }{
			{"ok", "completed %d"}, {"flaky", "failed %d TRANSIENT"}, {"flaky", "completed %d"},
			{"reject", "failed %d PERMANENT"}, {"later", "snoozed %d"}, {"later", "completed %d"}, {"slow", "completed %d"},
		} {
			w.Await(t, fmt.Sprintf(l.format, ids[l.action]), slack)
		}
		if lost := fmt.Sprintf("lost %d", ids["slow"]); slices.Contains(w.Lines(), lost) {
			t.Errorf("the worker printed %q: its heartbeat did not keep the lease", lost)
		}
	})
}

// TestTakeover: a worker killed with SIGKILL in the middle of a task
// loses it by the lease: once the lease expires the server takes the task
// over, and another worker works it to the end, as attempt 2.
func TestTakeover(t *testing.T) {
	t.Parallel()
	forEachLanguage(t, func(t *testing.T, lang language) {
		const lease = 1500 * time.Millisecond
		srv := startServer(t)
		id := enqueue(t, srv, fmt.Sprintf(`{"action": "slow", "seconds": %s}`, seconds(4*lease)))
		a := startWorker(t, lang, srv, "takeover-a", lease)
		a.Await(t, fmt.Sprintf("claimed %d attempt 1", id), slack)
		if err := a.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		a.Wait(t, slack)
		b := startWorker(t, lang, srv, "takeover-b", lease)
		b.Await(t, fmt.Sprintf("claimed %d attempt 2", id), lease+rescue+slack)
		got := final(t, srv, id, 4*lease+slack)
		as := attempts(t, srv, id)
		if got.GetState() != pb.TaskState_TASK_STATE_SUCCESS || got.GetAttempt() != 2 || len(as) != 2 ||
			as[0].GetOutcome() != pb.AttemptOutcome_ATTEMPT_OUTCOME_INTERRUPTED || as[0].GetWorker() != "takeover-a" ||
			as[1].GetOutcome() != pb.AttemptOutcome_ATTEMPT_OUTCOME_SUCCESS || as[1].GetWorker() != "takeover-b" {
			t.Errorf("task %s at attempt %d, attempts %v: want SUCCESS at attempt 2, takeover-a's INTERRUPTED, then takeover-b's SUCCESS",
				got.GetState(), got.GetAttempt(), as)
		}
	})
}

// TestGracefulStop: a worker sent SIGTERM in the middle of a task
// finishes it, reports it, and exits 0.
func TestGracefulStop(t *testing.T) {
	t.Parallel()
	forEachLanguage(t, func(t *testing.T, lang language) {
		const lease, work = time.Second, 3 * time.Second
		srv := startServer(t)
		id := enqueue(t, srv, fmt.Sprintf(`{"action": "slow", "seconds": %s}`, seconds(work)))
		w := startWorker(t, lang, srv, "graceful", lease)
		w.Await(t, fmt.Sprintf("claimed %d attempt 1", id), slack)
		if err := w.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		w.Await(t, fmt.Sprintf("completed %d", id), work+slack)
		// It may be in a Claim that waits for a task (at most 60s).
		if err := w.Wait(t, time.Minute+slack); err != nil {
			t.Errorf("the worker exited with %v after SIGTERM, want status 0", err)
		}
		got := final(t, srv, id, slack)
		if as := outcomes(attempts(t, srv, id)); got.GetState() != pb.TaskState_TASK_STATE_SUCCESS || got.GetAttempt() != 1 || !slices.Equal(as, []string{"SUCCESS"}) {
			t.Errorf("task %s at attempt %d, attempts %v: want SUCCESS at attempt 1, its only attempt", got.GetState(), got.GetAttempt(), as)
		}
	})
}
