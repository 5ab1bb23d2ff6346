package server

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// toTask is a task as the API sends it; without args when withArgs is
// false (answers that would repeat what the client sent, or grow with
// every subscriber).
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
		Tenant: t.Tenant, Deferrals: int64(t.Deferrals),
	}
	if t.Timeout == task.AutoTimeout {
		out.Timeout, out.AutoTimeout = nil, true
	}
	if withArgs {
		out.Args = t.Args
	}
	return out
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
func setTenant(t *store.NewTask, tenant string)    { t.Tenant = tenant }
func setEventTenant(e *store.Event, tenant string) { e.Tenant = tenant }

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
