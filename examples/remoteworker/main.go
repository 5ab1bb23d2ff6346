// Command remoteworker works grit tasks through the gRPC API alone: it
// uses the generated code (api/gritv1) and nothing of grit's Go library,
// as a worker written in another language would. It claims up to --batch
// tasks of kind "shell" (args {"cmd": "…"}) at a time, runs each command
// with sh -c, all of a claim's at once, renews their leases in one
// heartbeat while they run, and reports the claim's results in one Report
// call when its commands have ended: exit 0 completes the task; 75
// (EX_TEMPFAIL) is a TRANSIENT failure; anything else an UNCLASSIFIED
// one, which the task's policy retries (and dead-letters when the same
// failure comes twice); --policy is the policy of tasks without one of
// their own. A report is one call and one transaction for the claim's
// results, where a call per result (Complete, Fail) would be one each.
//
//	go run ./examples/remoteworker --server 127.0.0.1:7420
//
// The token is GRIT_TOKEN. On SIGTERM it stops claiming, lets the running
// commands finish, reports them, and deactivates itself.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/grit-run/grit/api/gritv1"
)

func main() {
	addr := flag.String("server", "127.0.0.1:7420", "the grit server")
	id := flag.String("worker-id", "", "the worker's name (default remote-HOST-PID)")
	lease := flag.Duration("lease", 15*time.Second, "how long a claim holds a task without a heartbeat")
	policy := flag.String("policy", "", `the retry policy of shell tasks without one of their own, sent with each failure (e.g. "5 1s 30s"; empty: the server's default)`)
	batch := flag.Int("batch", 10, "the most tasks a claim takes, run at once and reported together (1 to the server's batch limit)")
	flag.Parse()
	if *batch < 1 {
		fmt.Fprintf(os.Stderr, "remoteworker: --batch %d: want at least 1\n", *batch)
		os.Exit(2)
	}
	if *id == "" {
		host, _ := os.Hostname()
		*id = fmt.Sprintf("remote-%s-%d", host, os.Getpid())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	wk := &shellWorker{id: *id, lease: *lease, policy: *policy, batch: *batch}
	if err := wk.run(ctx, *addr); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "remoteworker:", err)
		os.Exit(1)
	}
}

// shellWorker is the worker's settings and its connection.
type shellWorker struct {
	id     string
	lease  time.Duration
	policy string
	batch  int
	w      pb.WorkersServiceClient
}

func (wk *shellWorker) run(ctx context.Context, addr string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	wk.w = pb.NewWorkersServiceClient(conn)
	if tok := os.Getenv("GRIT_TOKEN"); tok != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	}
	fmt.Printf("worker %s on %s\n", wk.id, addr)
	for ctx.Err() == nil {
		resp, err := wk.w.Claim(ctx, &pb.ClaimRequest{WorkerId: wk.id, Kinds: []string{"shell"}, Limit: int64(wk.batch),
			Lease: durationpb.New(wk.lease), Wait: durationpb.New(5 * time.Second), Pid: int64(os.Getpid())})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			fmt.Fprintln(os.Stderr, "claim:", err)
			time.Sleep(time.Second)
			continue
		}
		if len(resp.GetTasks()) > 0 {
			wk.report(ctx, wk.workAll(ctx, resp.GetTasks()))
		}
	}
	// Deactivate: this worker holds nothing now, so siblings need not wait
	// for its leases.
	_, err = wk.w.Release(context.WithoutCancel(ctx), &pb.ReleaseRequest{WorkerId: wk.id, Deactivate: true})
	return err
}

// workAll runs a claim's tasks at once while one heartbeat holds their
// leases, and returns their results, in the claim's order.
func (wk *shellWorker) workAll(ctx context.Context, ts []*pb.Task) []*pb.Result {
	cmdCtx, cancel := context.WithCancel(context.WithoutCancel(ctx)) // SIGTERM lets them finish
	defer cancel()
	cancels := make(map[int64]context.CancelFunc, len(ts)) // by lease token
	leases := make([]*pb.Lease, len(ts))
	ctxs := make([]context.Context, len(ts))
	for i, t := range ts {
		fmt.Printf("claimed %d attempt %d\n", t.GetId(), t.GetAttempt())
		leases[i] = &pb.Lease{TaskId: t.GetId(), LeaseToken: t.GetLeaseToken()}
		ctxs[i], cancels[t.GetLeaseToken()] = context.WithCancel(cmdCtx)
	}
	go wk.heartbeat(cmdCtx, leases, cancels)
	rs := make([]*pb.Result, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Go(func() { rs[i] = wk.work(ctxs[i], t) })
	}
	wg.Wait()
	return rs
}

// work runs one task's command and says how it ended; a failure carries
// the worker's policy.
func (wk *shellWorker) work(ctx context.Context, t *pb.Task) *pb.Result {
	r := &pb.Result{TaskId: t.GetId(), LeaseToken: t.GetLeaseToken()}
	var args struct {
		Cmd string `json:"cmd"`
	}
	if err := json.Unmarshal(t.GetArgs(), &args); err != nil || args.Cmd == "" {
		r.End = &pb.Result_Fail{Fail: &pb.Failed{ErrorClass: pb.ErrorClass_ERROR_CLASS_PERMANENT,
			Message: fmt.Sprintf("args %s: want {\"cmd\": \"a shell command\"}", t.GetArgs())}}
		return r
	}
	out, err := exec.CommandContext(ctx, "sh", "-c", args.Cmd).CombinedOutput()
	tail := string(out[max(0, len(out)-4096):])
	var exit *exec.ExitError
	switch {
	case err == nil:
		r.End = &pb.Result_Complete{Complete: &pb.Completed{Output: tail}}
	case errors.As(err, &exit) && exit.ExitCode() == 75:
		r.End = &pb.Result_Fail{Fail: &pb.Failed{ErrorClass: pb.ErrorClass_ERROR_CLASS_TRANSIENT,
			Message: "exit status 75", ExitCode: ptr(int32(75)), Output: tail, Policy: wk.policy}}
	default:
		// Any other failure is the policy's to judge, with poison detection.
		f := &pb.Failed{ErrorClass: pb.ErrorClass_ERROR_CLASS_UNCLASSIFIED, Message: err.Error(), Output: tail, Policy: wk.policy}
		if errors.As(err, &exit) {
			f.ExitCode = ptr(int32(exit.ExitCode()))
		}
		r.End = &pb.Result_Fail{Fail: f}
	}
	return r
}

// report sends a claim's results in one call and prints what each came
// to; a result refused (its lease was lost) is said so, the others stand.
func (wk *shellWorker) report(ctx context.Context, rs []*pb.Result) {
	resp, err := wk.w.Report(context.WithoutCancel(ctx), &pb.ReportRequest{WorkerId: wk.id, Results: rs})
	if err != nil {
		fmt.Fprintf(os.Stderr, "report %d results: %v\n", len(rs), err)
		return
	}
	fmt.Printf("reported %d results in one call\n", len(rs))
	for i, a := range resp.GetAnswers() {
		id := rs[i].GetTaskId()
		switch {
		case a.GetStatus() != nil:
			fmt.Fprintf(os.Stderr, "result of %d refused: %s\n", id, a.GetStatus().GetMessage())
		case rs[i].GetComplete() != nil:
			fmt.Printf("completed %d\n", id)
		default:
			fmt.Printf("failed %d: %s\n", id, a.GetDecision())
		}
	}
}

// heartbeat renews the claim's leases every third of the lease, in one
// call; a lease the server says is lost (taken over, cancelled) kills its
// command.
func (wk *shellWorker) heartbeat(ctx context.Context, leases []*pb.Lease, cancels map[int64]context.CancelFunc) {
	t := time.NewTicker(wk.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		resp, err := wk.w.Heartbeat(ctx, &pb.HeartbeatRequest{WorkerId: wk.id, Leases: leases, Lease: durationpb.New(wk.lease)})
		if err != nil {
			continue
		}
		for _, l := range resp.GetLost() {
			fmt.Printf("lost %d\n", l.GetTaskId())
			cancels[l.GetLeaseToken()]()
			leases = slices.DeleteFunc(leases, func(x *pb.Lease) bool { return x.GetLeaseToken() == l.GetLeaseToken() })
		}
	}
}

func ptr[T any](v T) *T { return &v }
