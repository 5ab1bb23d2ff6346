package server

import (
	"context"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/store"
)

// SendToTask keeps a message for a task's handler to receive, written to
// the audit log as grit send is, and wakes the waiting claims: a task
// that awaited the topic is due.
func (x *tasks) SendToTask(ctx context.Context, r *pb.SendToTaskRequest) (*pb.SendToTaskResponse, error) {
	const op = "send to task"
	if err := checkID("task_id", r.GetTaskId()); err != nil {
		return nil, statusOf(op, err)
	}
	mb, ok := x.s.cfg.Store.(store.Mailbox)
	if !ok {
		return nil, unsupported(op, "messages", op+": the server's store keeps no messages (both the SQLite and PostgreSQL stores do)")
	}
	m, err := mb.Send(ctx, r.GetTaskId(), r.GetTopic(), r.GetPayload())
	if err != nil {
		return nil, statusOf(op, aboutTask(r.GetTaskId(), err))
	}
	x.s.auditEntry(ctx, store.SentAudit(m))
	x.s.wake.notify()
	return &pb.SendToTaskResponse{Message: &pb.TaskMessage{
		Id: m.ID, TaskId: m.TaskID, Topic: m.Topic, Payload: m.Payload, SentAt: ts(m.SentAt),
	}}, nil
}
