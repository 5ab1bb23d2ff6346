package server

import (
	"context"
	"errors"
	"fmt"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// tasks serves the TasksService.
type tasks struct {
	pb.UnimplementedTasksServiceServer
	s *Server
}

func (x *tasks) Enqueue(ctx context.Context, r *pb.EnqueueRequest) (*pb.EnqueueResponse, error) {
	n, err := x.s.lim.enqueue(r)
	if err != nil {
		return nil, statusOf("enqueue", err)
	}
	ns := []task.NewTask{n}
	if err := x.s.checkExec(ctx, "enqueue", ns); err != nil {
		return nil, err
	}
	traced := x.s.tracer.Enqueue(ctx, ns)
	ts, err := x.s.cfg.Store.Enqueue(ctx, ns)
	traced(ts, err)
	if err != nil {
		return nil, statusOf("enqueue", err)
	}
	x.s.cfg.Metrics.Enqueued(ts)
	if !ts[0].Existed {
		x.s.wake.notify()
	}
	return &pb.EnqueueResponse{Task: toTask(ts[0].Task, true), Existed: ts[0].Existed}, nil
}

func (x *tasks) EnqueueBatch(ctx context.Context, r *pb.EnqueueBatchRequest) (*pb.EnqueueBatchResponse, error) {
	ns, err := x.s.lim.enqueueBatch(r)
	if err != nil {
		return nil, statusOf("enqueue batch", err)
	}
	if err := x.s.checkExec(ctx, "enqueue batch", ns); err != nil {
		return nil, err
	}
	traced := x.s.tracer.Enqueue(ctx, ns)
	ts, err := x.s.cfg.Store.Enqueue(ctx, ns)
	traced(ts, err)
	if err != nil {
		return nil, statusOf("enqueue batch", err)
	}
	x.s.cfg.Metrics.Enqueued(ts)
	existed := make([]bool, len(ts))
	for i, t := range ts {
		existed[i] = t.Existed
	}
	x.s.wake.notify()
	return &pb.EnqueueBatchResponse{Tasks: toTasks(store.Tasks(ts), false), Existed: existed}, nil
}

func (x *tasks) Get(ctx context.Context, r *pb.GetRequest) (*pb.GetResponse, error) {
	if err := checkID("id", r.GetId()); err != nil {
		return nil, statusOf("get", err)
	}
	t, err := x.s.cfg.Store.GetTask(ctx, r.GetId())
	if err != nil {
		return nil, statusOf("get", aboutTask(r.GetId(), err))
	}
	return &pb.GetResponse{Task: toTask(t, true)}, nil
}

// List answers a page of up to page_size tasks, fewer when their args
// would pass Config.MaxAnswer; next_page_token continues it (pages.go).
func (x *tasks) List(ctx context.Context, r *pb.ListRequest) (*pb.ListResponse, error) {
	f, err := x.s.lim.list(r)
	if err != nil {
		return nil, statusOf("list", err)
	}
	limit := f.Limit
	f.Limit++ // one more tells whether there is a next page
	ts, err := x.s.cfg.Store.ListTasks(ctx, f)
	if err != nil {
		return nil, statusOf("list", err)
	}
	full := r.GetView() != pb.TaskView_TASK_VIEW_BASIC
	n := min(len(ts), limit)
	if full {
		n = min(n, x.s.fit(ts))
	}
	out := &pb.ListResponse{Tasks: toTasks(ts[:n], full)}
	if n < len(ts) {
		out.NextPageToken = pageToken(pagedList(r), ts[n-1].ID)
	}
	return out, nil
}

// fit is how many of ts, from the first, an answer carries: as many as
// their args fit in Config.MaxAnswer, and at least one.
func (s *Server) fit(ts []task.Task) int {
	size := 0
	for i, t := range ts {
		size += len(t.Args)
		if size > s.cfg.MaxAnswer && i > 0 {
			return i
		}
	}
	return len(ts)
}

func (x *tasks) Attempts(ctx context.Context, r *pb.AttemptsRequest) (*pb.AttemptsResponse, error) {
	if err := checkID("task_id", r.GetTaskId()); err != nil {
		return nil, statusOf("attempts", err)
	}
	if _, err := x.s.cfg.Store.GetTask(ctx, r.GetTaskId()); err != nil {
		return nil, statusOf("attempts", aboutTask(r.GetTaskId(), err))
	}
	as, err := x.s.cfg.Store.Attempts(ctx, r.GetTaskId())
	if err != nil {
		return nil, statusOf("attempts", aboutTask(r.GetTaskId(), err))
	}
	x.s.trim(as)
	out := &pb.AttemptsResponse{Attempts: make([]*pb.Attempt, len(as))}
	for i, a := range as {
		out.Attempts[i] = toAttempt(a)
	}
	return out, nil
}

// trim clears the output and error of the oldest attempts past what an
// answer carries (Config.MaxAnswer), newest first; the records stay.
func (s *Server) trim(as []task.Attempt) {
	size := 0
	for i := len(as) - 1; i >= 0; i-- {
		size += len(as[i].Output) + len(as[i].Error)
		if size > s.cfg.MaxAnswer {
			as[i].Output, as[i].Error = "", ""
		}
	}
}

func (x *tasks) Cancel(ctx context.Context, r *pb.CancelRequest) (*pb.CancelResponse, error) {
	if err := checkID("id", r.GetId()); err != nil {
		return nil, statusOf("cancel", err)
	}
	t, err := x.s.act(ctx, r.GetId(), task.ActCancel, task.Cancelled)
	if err != nil {
		return nil, statusOf("cancel", aboutTask(r.GetId(), err))
	}
	return &pb.CancelResponse{Task: toTask(t, true)}, nil
}

// deadLetterActions maps the API's actions to the store's, with the state
// each leads to.
var deadLetterActions = map[pb.DeadLetterAction]struct {
	act task.Action
	to  task.State
}{
	pb.DeadLetterAction_DEAD_LETTER_ACTION_REPLAY: {task.ActReplay, task.Ready},
	pb.DeadLetterAction_DEAD_LETTER_ACTION_SKIP:   {task.ActSkip, task.Skipped},
	pb.DeadLetterAction_DEAD_LETTER_ACTION_FAIL:   {task.ActFail, task.Failed},
}

func (x *tasks) DeadLetter(ctx context.Context, r *pb.DeadLetterRequest) (*pb.DeadLetterResponse, error) {
	if err := checkID("id", r.GetId()); err != nil {
		return nil, statusOf("dead letter", err)
	}
	a, ok := deadLetterActions[r.GetAction()]
	if !ok {
		return nil, statusOf("dead letter", bad("action", "%v: want REPLAY, SKIP or FAIL", r.GetAction()))
	}
	t, err := x.s.act(ctx, r.GetId(), a.act, a.to)
	if err != nil {
		return nil, statusOf("dead letter "+string(a.act), aboutTask(r.GetId(), err))
	}
	if a.act == task.ActReplay {
		x.s.wake.notify()
	}
	return &pb.DeadLetterResponse{Task: toTask(t, true)}, nil
}

// act applies an operator's action. A task already in the state the
// action leads to is returned as it is, so that a retried action (its
// first answer lost) is not an error.
func (s *Server) act(ctx context.Context, id int64, a task.Action, to task.State) (task.Task, error) {
	t, err := s.cfg.Store.Act(ctx, id, a)
	if err == nil {
		s.audit(ctx, string(a), fmt.Sprintf("task %d", id))
	}
	if !errors.Is(err, task.ErrWrongState) {
		return t, err
	}
	cur, gerr := s.cfg.Store.GetTask(ctx, id)
	switch {
	case gerr != nil:
		return t, err
	case cur.State == to:
		return cur, nil
	case a == task.ActCancel:
		return t, withState(cur.State, fmt.Errorf("task %d is %s: only a task that has not ended can be cancelled: %w", id, cur.State, task.ErrWrongState))
	}
	return t, withState(cur.State, fmt.Errorf("task %d is %s: only a DEAD_LETTER task can be replayed, skipped or failed: %w", id, cur.State, task.ErrWrongState))
}

// Redrive resumes a run that ended without succeeding (ops.Redrive),
// written to the audit log, and wakes the waiting claims.
func (x *tasks) Redrive(ctx context.Context, r *pb.RedriveRequest) (*pb.RedriveResponse, error) {
	if err := checkID("run_id", r.GetRunId()); err != nil {
		return nil, statusOf("redrive", err)
	}
	rd, entry, err := ops.Redrive(ctx, x.s.cfg.Store, r.GetRunId())
	if err != nil {
		return nil, statusOf("redrive", aboutRun(r.GetRunId(), err))
	}
	x.s.auditEntry(ctx, entry)
	x.s.wake.notify()
	return &pb.RedriveResponse{Run: toRun(rd.Run), TaskIds: rd.Tasks}, nil
}

func (x *tasks) Publish(ctx context.Context, r *pb.PublishRequest) (*pb.PublishResponse, error) {
	evs, err := x.s.lim.events("events", r.GetEvents(), true)
	if err != nil {
		return nil, statusOf("publish", err)
	}
	ts, err := x.s.cfg.Store.Publish(ctx, evs)
	if err != nil {
		return nil, statusOf("publish", err)
	}
	if len(ts) > 0 {
		x.s.wake.notify()
	}
	return &pb.PublishResponse{Deliveries: toTasks(ts, false)}, nil
}
