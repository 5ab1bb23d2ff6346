package server

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// attemptSpans holds the consumer spans of remote workers' attempts, from
// the claim that starts one to the report that ends it (Complete, Fail,
// Snooze, a Report's result, Release), by lease token, which is unique in the store. A
// remote worker gets its attempt's traceparent with the task, to make its
// own spans children of it. A span whose attempt never reports (its
// worker died, a sibling took the task over, the server restarted) is
// ended as abandoned once it is older than a few leases; after a restart
// it is simply lost.
type attemptSpans struct {
	tracer *tracing.Tracer // nil: no spans

	mu    sync.Mutex
	held  map[int64]heldSpan
	swept time.Time
}

type heldSpan struct {
	span  trace.Span
	since time.Time
}

func newAttemptSpans(t *tracing.Tracer) *attemptSpans {
	return &attemptSpans{tracer: t, held: map[int64]heldSpan{}}
}

// start starts the span of each claimed task's attempt and returns their
// traceparents by task id; nil when the server does not trace.
func (a *attemptSpans) start(ts []task.Task, lease time.Duration) map[int64]string {
	if a.tracer == nil || len(ts) == 0 {
		return nil
	}
	now := time.Now()
	out := make(map[int64]string, len(ts))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sweepLocked(now, lease)
	for i := range ts {
		// The span outlives the Claim call: it is a child of the task's
		// enqueue (Attempt's parent), not of the call.
		_, s := a.tracer.Attempt(context.Background(), &ts[i])
		a.held[ts[i].LeaseToken] = heldSpan{span: s, since: now}
		out[ts[i].ID] = tracing.Format(s.SpanContext())
	}
	return out
}

// end ends the span of f's attempt, if one is held, with f's outcome,
// and keeps its context in f for the next attempt to link to.
func (a *attemptSpans) end(f *store.Finish) {
	if a.tracer == nil {
		return
	}
	a.mu.Lock()
	h, ok := a.held[f.Token]
	delete(a.held, f.Token)
	a.mu.Unlock()
	if ok {
		tracing.End(h.span, f)
	}
}

// sweepLocked ends, at most once a minute, the spans held longer than
// four leases: their attempts will not report.
func (a *attemptSpans) sweepLocked(now time.Time, lease time.Duration) {
	if now.Sub(a.swept) < time.Minute {
		return
	}
	a.swept = now
	for token, h := range a.held {
		if now.Sub(h.since) > 4*lease {
			h.span.SetStatus(codes.Error, "the attempt never reported: its worker died or lost the task")
			h.span.End()
			delete(a.held, token)
		}
	}
}
