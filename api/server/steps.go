package server

import (
	"context"
	"fmt"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/task"
)

// A remote worker's durable steps go through the same store call as a Go
// handler's (store.RecordStep), fenced by the lease token there; the
// server checks first that the worker names itself as the holder.

func (x *workers) RecordStep(ctx context.Context, r *pb.RecordStepRequest) (*pb.RecordStepResponse, error) {
	const op = "record step"
	st := r.GetStep()
	if st == nil {
		return nil, statusOf(op, &FieldError{Field: "step", Problem: "missing: give the step to record"})
	}
	if n := len(st.GetResult()); n > x.s.cfg.MaxPayload {
		return nil, statusOf(op, &FieldError{Field: "step.result", Reason: pb.ReasonPayloadTooLarge, Problem: fmt.Sprintf("%d bytes: the server takes at most %d (--max-payload); record a reference (a key, a URL) to a large result", n, x.s.cfg.MaxPayload)})
	}
	t, err := x.s.holding(ctx, r.GetWorkerId(), r.GetTaskId(), r.GetLeaseToken(), "the step is not recorded")
	if err != nil {
		return nil, statusOf(op, aboutTask(r.GetTaskId(), err))
	}
	got, err := x.s.cfg.Store.RecordStep(ctx, t.ID, t.LeaseToken, task.Step{Seq: int(st.GetSeq()), Name: st.GetName(),
		Occurrence: int(st.GetOccurrence()), Attempt: int(st.GetAttempt()), Result: st.GetResult()})
	if err != nil {
		return nil, statusOf(op, err)
	}
	return &pb.RecordStepResponse{Step: toStep(got)}, nil
}

func (x *workers) Steps(ctx context.Context, r *pb.StepsRequest) (*pb.StepsResponse, error) {
	const op = "steps"
	ss, err := x.s.cfg.Store.Steps(ctx, r.GetTaskId())
	if err != nil {
		return nil, statusOf(op, err)
	}
	out := &pb.StepsResponse{Steps: make([]*pb.Step, len(ss))}
	for i, s := range ss {
		out.Steps[i] = toStep(s)
	}
	return out, nil
}

func toStep(s task.Step) *pb.Step {
	return &pb.Step{Seq: int32(s.Seq), Name: s.Name, Occurrence: int32(s.Occurrence), Attempt: int32(s.Attempt), Result: s.Result, RecordedAt: ts(s.RecordedAt)}
}
