// Command remoteworker works grit tasks through the gRPC API alone: it
// uses the generated code (api/gritv1) and nothing of grit's Go library,
// as a worker written in another language would. It claims tasks of kind
// "shell" (args {"cmd": "…"}), runs each command with sh -c, renews its
// leases while the command runs, and reports the result: exit 0 is
// Complete; 75 (EX_TEMPFAIL) a TRANSIENT failure; anything else an
// UNCLASSIFIED one, which the task's policy retries (and dead-letters when
// the same failure comes twice); --policy is the policy of tasks without
// one of their own.
//
//	go run ./examples/remoteworker --server 127.0.0.1:7420
//
// The token is GRIT_TOKEN. On SIGTERM it stops claiming, lets the running
// command finish, and gives back what it has not started.
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
	flag.Parse()
	if *id == "" {
		host, _ := os.Hostname()
		*id = fmt.Sprintf("remote-%s-%d", host, os.Getpid())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *id, *lease, *policy); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "remoteworker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr, id string, lease time.Duration, policy string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	w := pb.NewWorkersClient(conn)
	if tok := os.Getenv("GRIT_TOKEN"); tok != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	}
	fmt.Printf("worker %s on %s\n", id, addr)
	for ctx.Err() == nil {
		resp, err := w.Claim(ctx, &pb.ClaimRequest{WorkerId: id, Kinds: []string{"shell"}, Limit: 1,
			Lease: durationpb.New(lease), Wait: durationpb.New(5 * time.Second), Pid: int64(os.Getpid())})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			fmt.Fprintln(os.Stderr, "claim:", err)
			time.Sleep(time.Second)
			continue
		}
		for _, t := range resp.GetTasks() {
			work(ctx, w, id, lease, policy, t)
		}
	}
	// Deactivate: this worker holds nothing now, so siblings need not wait
	// for its leases.
	_, err = w.Release(context.WithoutCancel(ctx), &pb.ReleaseRequest{WorkerId: id, Deactivate: true})
	return err
}

// work runs one task's command while heartbeats hold its lease, and
// reports how it ended; a failure carries the worker's policy.
func work(ctx context.Context, w pb.WorkersClient, id string, lease time.Duration, policy string, t *pb.Task) {
	fmt.Printf("claimed %d attempt %d\n", t.GetId(), t.GetAttempt())
	var args struct {
		Cmd string `json:"cmd"`
	}
	held := &pb.Lease{TaskId: t.GetId(), LeaseToken: t.GetLeaseToken()}
	if err := json.Unmarshal(t.GetArgs(), &args); err != nil || args.Cmd == "" {
		report(ctx, w, &pb.FailRequest{WorkerId: id, TaskId: held.TaskId, LeaseToken: held.LeaseToken, Class: pb.ErrorClass_ERROR_CLASS_PERMANENT,
			Message: fmt.Sprintf("args %s: want {\"cmd\": \"a shell command\"}", t.GetArgs())})
		return
	}
	cmdCtx, cancel := context.WithCancel(context.WithoutCancel(ctx)) // SIGTERM lets it finish
	defer cancel()
	go heartbeat(cmdCtx, w, id, lease, held, cancel)
	cmd := exec.CommandContext(cmdCtx, "sh", "-c", args.Cmd)
	out, err := cmd.CombinedOutput()
	tail := string(out[max(0, len(out)-4096):])
	var exit *exec.ExitError
	switch {
	case err == nil:
		_, err = w.Complete(context.WithoutCancel(ctx), &pb.CompleteRequest{WorkerId: id, TaskId: held.TaskId, LeaseToken: held.LeaseToken, Output: tail})
		if err != nil {
			fmt.Fprintln(os.Stderr, "complete:", err)
			return
		}
		fmt.Printf("completed %d\n", t.GetId())
	case errors.As(err, &exit) && exit.ExitCode() == 75:
		report(ctx, w, &pb.FailRequest{WorkerId: id, TaskId: held.TaskId, LeaseToken: held.LeaseToken, Class: pb.ErrorClass_ERROR_CLASS_TRANSIENT,
			Message: "exit status 75", ExitCode: ptr(int32(75)), Output: tail, Policy: policy})
	default:
		req := &pb.FailRequest{WorkerId: id, TaskId: held.TaskId, LeaseToken: held.LeaseToken, Message: err.Error(), Output: tail, Policy: policy}
		if errors.As(err, &exit) {
			req.ExitCode = ptr(int32(exit.ExitCode()))
		}
		report(ctx, w, req)
	}
}

func report(ctx context.Context, w pb.WorkersClient, req *pb.FailRequest) {
	resp, err := w.Fail(context.WithoutCancel(ctx), req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fail:", err)
		return
	}
	fmt.Printf("failed %d: %s\n", req.GetTaskId(), resp.GetDecision())
}

// heartbeat renews the lease every third of it; a lease the server says is
// lost (taken over, cancelled) kills the command.
func heartbeat(ctx context.Context, w pb.WorkersClient, id string, lease time.Duration, held *pb.Lease, lost func()) {
	t := time.NewTicker(lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		resp, err := w.Heartbeat(ctx, &pb.HeartbeatRequest{WorkerId: id, Leases: []*pb.Lease{held}, Lease: durationpb.New(lease)})
		if err == nil && len(resp.GetLost()) > 0 {
			fmt.Printf("lost %d\n", held.GetTaskId())
			lost()
			return
		}
	}
}

func ptr[T any](v T) *T { return &v }
