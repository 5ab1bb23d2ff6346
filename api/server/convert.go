package server

import (
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// toTask is a task as the API sends it; without args, and args_omitted
// set, when withArgs is false (answers that would repeat what the client
// sent, or grow with every subscriber, and a BASIC List).
func toTask(t task.Task, withArgs bool) *pb.Task {
	out := &pb.Task{
		Id: t.ID, RunId: t.RunID, Name: t.Name, Kind: t.Kind, Queue: t.Queue, Group: t.Group,
		Priority: int64(t.Priority), State: pb.TaskStateOf(t.State), Policy: t.Policy,
		PoisonAfter: int64(t.PoisonAfter), Timeout: dur(t.Timeout), Grace: dur(t.Grace),
		Attempt: int64(t.Attempt), NextAt: ts(t.NextAt), PrevDelay: dur(t.PrevDelay),
		LeaseOwner: t.LeaseOwner, LeaseToken: t.LeaseToken, LeaseExpires: ts(t.LeaseExpires),
		LastError: t.LastError, Fingerprint: t.Fingerprint, Streak: int64(t.Streak),
		IdempotencyKey: t.IdempotencyKey, CreatedAt: ts(t.CreatedAt),
		FirstStartedAt: ts(t.FirstStartedAt), FinishedAt: ts(t.FinishedAt),
		Tenant: t.Tenant, Deferrals: int64(t.Deferrals), Snoozes: int64(t.Snoozes),
		Waits: int64(t.Waits), Origin: t.Origin, Result: t.Result,
	}
	if t.Timeout == task.AutoTimeout {
		out.Timeout, out.AutoTimeout = nil, true
	}
	out.RetryPolicy = policyFields(t.Policy)
	if withArgs {
		out.Args = t.Args
	} else {
		out.ArgsOmitted = true
	}
	return out
}

func toRun(r task.Run) *pb.Run {
	return &pb.Run{
		Id: r.ID, Name: r.Name, Key: r.Key, MaxFailures: int32(r.MaxFailures), State: pb.TaskStateOf(r.State),
		CreatedAt: ts(r.CreatedAt), FinishedAt: ts(r.FinishedAt),
	}
}

func toTasks(ts []task.Task, withArgs bool) []*pb.Task {
	out := make([]*pb.Task, len(ts))
	for i, t := range ts {
		out[i] = toTask(t, withArgs)
	}
	return out
}

func toAttempt(a task.Attempt) *pb.Attempt {
	out := &pb.Attempt{
		TaskId: a.TaskID, Number: int64(a.Number), Worker: a.Worker, LeaseToken: a.LeaseToken,
		StartedAt: ts(a.StartedAt), EndedAt: ts(a.EndedAt), Outcome: pb.AttemptOutcomeOf(a.Outcome),
		ErrorClass: pb.ErrorClassOf(a.Class), Error: a.Error, Fingerprint: a.Fingerprint, Signal: a.Signal,
		Output: a.Output, Delay: dur(a.Delay), Decision: pb.DecisionOf(a.Decision),
	}
	if a.ExitCode != nil {
		c := int32(*a.ExitCode)
		out.ExitCode = &c
	}
	return out
}

func toLeases(ls []store.Lease) []*pb.Lease {
	out := make([]*pb.Lease, len(ls))
	for i, l := range ls {
		out[i] = &pb.Lease{TaskId: l.TaskID, LeaseToken: l.Token}
	}
	return out
}

// setTenant and setEventTenant keep the tenant, which the store keeps for
// per-tenant limits.
func setTenant(t *task.NewTask, tenant string)    { t.Tenant = tenant }
func setEventTenant(e *task.Event, tenant string) { e.Tenant = tenant }

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func dur(d time.Duration) *durationpb.Duration {
	if d == 0 {
		return nil
	}
	return durationpb.New(d)
}

// policyFields is a task's policy string as fields; nil for none, or for
// one that does not parse (a store edited by hand). The answers share one
// message per string, kept while there are at most maxPolicyFields of
// them: a fleet has a few policies, and parsing one for every task of
// every claim would be work for nothing. The message is read, never
// changed.
func policyFields(s string) *pb.RetryPolicy {
	if s == "" {
		return nil
	}
	if r, ok := policyCache.Load(s); ok {
		return r.(*pb.RetryPolicy)
	}
	p, err := retry.Parse(s)
	if err != nil {
		return nil
	}
	r := pb.RetryPolicyOf(p)
	if policyCached.Add(1) <= maxPolicyFields {
		policyCache.Store(s, r)
	}
	return r
}

const maxPolicyFields = 1000

var (
	policyCache  sync.Map // policy string → *pb.RetryPolicy
	policyCached atomic.Int64
)
