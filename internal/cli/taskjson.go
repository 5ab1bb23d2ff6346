package cli

import (
	"encoding/json"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/task"
)

// taskJSON is a task as every command prints it with --json (tasks, task,
// dlq, get, cancel, enqueue, run, wait), whether it read the store or a
// grit server: every key always there, ids as numbers, args as the JSON
// they are, states upper case, times in RFC 3339 or null, durations in
// milliseconds. taskView makes it; nothing else does.
type taskJSON struct {
	ID             int64           `json:"id"`
	RunID          *int64          `json:"run_id"` // null: enqueued alone, in no run
	Name           string          `json:"name"`
	Kind           string          `json:"kind"`
	Args           json.RawMessage `json:"args"` // null: none; a string if they are not JSON
	Queue          string          `json:"queue"`
	Group          string          `json:"group"`
	Tenant         string          `json:"tenant"`
	Priority       int             `json:"priority"`
	State          task.State      `json:"state"`
	Policy         string          `json:"policy"`
	PoisonAfter    int             `json:"poison_after"`
	TimeoutMS      int64           `json:"timeout_ms"`
	AutoTimeout    bool            `json:"auto_timeout"` // learned from the kind's runs: each attempt says its own
	GraceMS        int64           `json:"grace_ms"`
	Attempt        int             `json:"attempt"` // attempts started
	NextAt         *time.Time      `json:"next_at"`
	PrevDelayMS    int64           `json:"prev_delay_ms"`
	LeaseOwner     string          `json:"lease_owner"`
	LeaseToken     int64           `json:"lease_token"`
	LeaseExpires   *time.Time      `json:"lease_expires"`
	Error          string          `json:"error"`
	Fingerprint    string          `json:"fingerprint"`
	Streak         int             `json:"streak"`
	Deferrals      int             `json:"deferrals"`
	Snoozes        int             `json:"snoozes"`
	Waits          int             `json:"waits"`
	Origin         string          `json:"origin"`
	IdempotencyKey string          `json:"idempotency_key"`
	CreatedAt      *time.Time      `json:"created_at"`
	FirstStartedAt *time.Time      `json:"first_started_at"`
	FinishedAt     *time.Time      `json:"finished_at"`
	// Result is what its handler set (grit.SetResult): null for none,
	// and in lists, which leave it out (read the task for it).
	Result json.RawMessage `json:"result"`
}

func taskView(t task.Task) taskJSON {
	v := taskJSON{
		ID: t.ID, Name: t.Name, Kind: t.Kind, Args: argsJSON(t.Args), Queue: t.Queue, Group: t.Group, Tenant: t.Tenant,
		Priority: t.Priority, State: t.State, Policy: t.Policy, PoisonAfter: t.PoisonAfter,
		TimeoutMS: max(t.Timeout, 0).Milliseconds(), AutoTimeout: t.Timeout == task.AutoTimeout, GraceMS: t.Grace.Milliseconds(), Attempt: t.Attempt,
		NextAt: timeOrNull(t.NextAt), PrevDelayMS: t.PrevDelay.Milliseconds(),
		LeaseOwner: t.LeaseOwner, LeaseToken: t.LeaseToken, LeaseExpires: timeOrNull(t.LeaseExpires),
		Error: t.LastError, Fingerprint: t.Fingerprint, Streak: t.Streak, Deferrals: t.Deferrals, Snoozes: t.Snoozes, Waits: t.Waits, Origin: t.Origin,
		IdempotencyKey: t.IdempotencyKey, CreatedAt: timeOrNull(t.CreatedAt), FirstStartedAt: timeOrNull(t.FirstStartedAt), FinishedAt: timeOrNull(t.FinishedAt),
		Result: argsJSON(t.Result),
	}
	if t.RunID != 0 {
		v.RunID = &t.RunID
	}
	return v
}

func taskViews(ts []task.Task) []taskJSON {
	out := make([]taskJSON, len(ts))
	for i, t := range ts {
		out[i] = taskView(t)
	}
	return out
}

// argsJSON is a task's args for its JSON: null when it has none, and a
// string when they are not JSON (the store keeps bytes), so that the
// output stays JSON.
func argsJSON(args []byte) json.RawMessage {
	switch {
	case len(args) == 0:
		return json.RawMessage("null")
	case json.Valid(args):
		return args
	}
	s, _ := json.Marshal(string(args))
	return s
}

func timeOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// attemptJSON is an attempt as grit task --json prints it, in taskJSON's
// manner.
type attemptJSON struct {
	TaskID      int64        `json:"task_id"`
	Number      int          `json:"number"`
	Worker      string       `json:"worker"`
	LeaseToken  int64        `json:"lease_token"`
	StartedAt   *time.Time   `json:"started_at"`
	EndedAt     *time.Time   `json:"ended_at"`
	Outcome     task.Outcome `json:"outcome"`
	Class       string       `json:"class"`
	Error       string       `json:"error"`
	Fingerprint string       `json:"fingerprint"`
	ExitCode    *int         `json:"exit_code"`
	Signal      string       `json:"signal"`
	Output      string       `json:"output"`
	DelayMS     int64        `json:"delay_ms"` // chosen before the next attempt
	Decision    string       `json:"decision"`
	// An auto timeout's: the attempt's, and how it was chosen; 0 and ""
	// for a fixed one, which is the task's timeout_ms.
	TimeoutMS     int64  `json:"timeout_ms"`
	TimeoutSource string `json:"timeout_source"`
}

func attemptViews(as []task.Attempt) []attemptJSON {
	out := make([]attemptJSON, len(as))
	for i, a := range as {
		out[i] = attemptJSON{
			TaskID: a.TaskID, Number: a.Number, Worker: a.Worker, LeaseToken: a.LeaseToken,
			StartedAt: timeOrNull(a.StartedAt), EndedAt: timeOrNull(a.EndedAt), Outcome: a.Outcome,
			Class: a.Class, Error: a.Error, Fingerprint: a.Fingerprint, ExitCode: a.ExitCode, Signal: a.Signal,
			Output: a.Output, DelayMS: a.Delay.Milliseconds(), Decision: a.Decision,
			TimeoutMS: a.Timeout.Milliseconds(), TimeoutSource: a.TimeoutSource,
		}
	}
	return out
}

// fromPB is a task a grit server sent, as the store keeps it.
func fromPB(t *pb.Task) task.Task {
	out := task.Task{
		ID: t.GetId(), RunID: t.GetRunId(), Name: t.GetName(), Kind: t.GetKind(), Args: t.GetArgs(),
		Queue: t.GetQueue(), Group: t.GetGroup(), Tenant: t.GetTenant(), Priority: int(t.GetPriority()),
		State: t.GetState().Task(), Policy: t.GetPolicy(), PoisonAfter: int(t.GetPoisonAfter()),
		Timeout: t.GetTimeout().AsDuration(), Grace: t.GetGrace().AsDuration(), Attempt: int(t.GetAttempt()),
		NextAt: pbTime(t.GetNextAt()), PrevDelay: t.GetPrevDelay().AsDuration(),
		LeaseOwner: t.GetLeaseOwner(), LeaseToken: t.GetLeaseToken(), LeaseExpires: pbTime(t.GetLeaseExpires()),
		LastError: t.GetLastError(), Fingerprint: t.GetFingerprint(), Streak: int(t.GetStreak()),
		Deferrals: int(t.GetDeferrals()), Snoozes: int(t.GetSnoozes()), Waits: int(t.GetWaits()), Origin: t.GetOrigin(), IdempotencyKey: t.GetIdempotencyKey(), CreatedAt: pbTime(t.GetCreatedAt()),
		FirstStartedAt: pbTime(t.GetFirstStartedAt()), FinishedAt: pbTime(t.GetFinishedAt()), Result: t.GetResult(),
	}
	if t.GetAutoTimeout() && t.GetTimeout() == nil {
		out.Timeout = task.AutoTimeout
	}
	return out
}

// pbTime is a protobuf time, zero when absent.
func pbTime(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}
