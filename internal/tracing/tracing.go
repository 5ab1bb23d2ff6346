// Package tracing makes grit's OpenTelemetry spans, after the messaging
// semantic conventions: a producer span when a task is enqueued, whose
// context (a W3C traceparent) the store keeps with the task, and a
// consumer span for each attempt, a child of the enqueue's span, linked to
// it and to the previous attempt's span. The engine (Go workers), the
// grit client and the API server share it, so a span means the same
// whoever makes it. A nil *Tracer makes no span and costs nothing: tracing
// is off unless configured (FromEnv).
package tracing

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit/internal/version"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// scope names grit's instrumentation in the spans it makes.
const scope = "github.com/grit-run/grit"

// The attributes of grit's spans: the messaging conventions' where they
// have one, grit's own (grit.*) for what they do not.
const (
	attrSystem      = attribute.Key("messaging.system")
	attrOpType      = attribute.Key("messaging.operation.type")
	attrOpName      = attribute.Key("messaging.operation.name")
	attrDestination = attribute.Key("messaging.destination.name")
	attrMessageID   = attribute.Key("messaging.message.id")
	attrErrorType   = attribute.Key("error.type")
	attrKind        = attribute.Key("grit.task.kind")
	attrGroup       = attribute.Key("grit.task.group")
	attrAttempt     = attribute.Key("grit.attempt")
	attrOutcome     = attribute.Key("grit.outcome")
	attrClass       = attribute.Key("grit.error.class")
	attrState       = attribute.Key("grit.task.state")
	attrLink        = attribute.Key("grit.link")
	attrBatch       = attribute.Key("messaging.batch.message_count")
	attrRun         = attribute.Key("grit.run.id")
	// AttrLink's values: what a link of an attempt's span points to.
	linkEnqueue  = "enqueue"
	linkPrevious = "previous_attempt"
)

var system = attrSystem.String("grit")

// Tracer makes grit's spans with a TracerProvider.
type Tracer struct {
	t trace.Tracer
}

// New returns a Tracer on tp; nil when tp is nil (no spans).
func New(tp trace.TracerProvider) *Tracer {
	if tp == nil {
		return nil
	}
	return &Tracer{t: tp.Tracer(scope, trace.WithInstrumentationVersion(version.Get().String()))}
}

// Enqueue starts a producer span for each of ns, children of ctx's span,
// and keeps each span's context in its task (NewTask.Trace). The function
// it returns ends them with what the store answered: the tasks enqueued,
// or the error.
func (x *Tracer) Enqueue(ctx context.Context, ns []store.NewTask) func([]store.Enqueued, error) {
	if x == nil || len(ns) == 0 {
		return func([]store.Enqueued, error) {}
	}
	spans := make([]trace.Span, len(ns))
	for i := range ns {
		n := &ns[i]
		q := or(n.Queue, "default")
		var s trace.Span
		_, s = x.t.Start(ctx, "send "+q, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
			system, attrOpType.String("send"), attrOpName.String("enqueue"), attrDestination.String(q),
			attrKind.String(n.Kind)))
		if n.Group != "" {
			s.SetAttributes(attrGroup.String(n.Group))
		}
		n.Trace = Format(s.SpanContext())
		spans[i] = s
	}
	return func(ts []store.Enqueued, err error) {
		for i, s := range spans {
			if err != nil {
				s.RecordError(err)
				s.SetStatus(codes.Error, err.Error())
			} else if i < len(ts) {
				s.SetAttributes(attrMessageID.String(strconv.FormatInt(ts[i].ID, 10)))
			}
			s.End()
		}
	}
}

// Submit starts a producer span for a run, a child of ctx's span, and
// keeps its context in each of the run's tasks: the attempts of a whole
// run are one trace. The function it returns ends it with what the store
// answered.
func (x *Tracer) Submit(ctx context.Context, r *store.NewRun) func(task.Run, error) {
	if x == nil {
		return func(task.Run, error) {}
	}
	_, s := x.t.Start(ctx, "send run "+r.Name, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
		system, attrOpType.String("send"), attrOpName.String("submit"), attrBatch.Int(len(r.Tasks))))
	tp := Format(s.SpanContext())
	for i := range r.Tasks {
		r.Tasks[i].Trace = tp
	}
	return func(run task.Run, err error) {
		if err != nil && !errors.Is(err, task.ErrDuplicate) {
			s.RecordError(err)
			s.SetStatus(codes.Error, err.Error())
		}
		s.SetAttributes(attrRun.Int64(run.ID))
		s.End()
	}
}

// Attempt starts the consumer span of t's attempt, a child of its
// enqueue's span (or of ctx's, when it was not traced), linked to that
// span and to its previous attempt's, and returns ctx with it.
func (x *Tracer) Attempt(ctx context.Context, t *task.Task) (context.Context, trace.Span) {
	var links []trace.Link
	if sc := Parse(t.Trace); sc.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attrLink.String(linkEnqueue)}})
	}
	if sc := Parse(t.AttemptTrace); sc.IsValid() {
		links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attrLink.String(linkPrevious)}})
	}
	attrs := []attribute.KeyValue{
		system, attrOpType.String("process"), attrOpName.String("process"), attrDestination.String(t.Queue),
		attrMessageID.String(strconv.FormatInt(t.ID, 10)), attrKind.String(t.Kind), attrAttempt.Int(t.Attempt),
	}
	if t.Group != "" {
		attrs = append(attrs, attrGroup.String(t.Group))
	}
	return x.t.Start(ctx, "process "+t.Queue, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithLinks(links...), trace.WithAttributes(attrs...))
}

// End records how an attempt ended (f: its outcome, error class and the
// task's next state), ends its span, and keeps the span's context in f
// for the next attempt to link to.
func End(s trace.Span, f *store.Finish) {
	if s == nil {
		return
	}
	a := &f.Attempt
	s.SetAttributes(attrOutcome.String(string(a.Outcome)), attrState.String(string(f.State)))
	if a.Class != "" {
		s.SetAttributes(attrClass.String(a.Class), attrErrorType.String(a.Class))
	}
	switch a.Outcome {
	case task.OutcomeError, task.OutcomeTimeout, task.OutcomeInterrupted:
		s.SetStatus(codes.Error, or(a.Error, string(a.Outcome)))
	}
	f.Trace = Format(s.SpanContext())
	s.End()
}

// Format is sc as a W3C traceparent; "" when sc is not valid.
func Format(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), c)
	return c["traceparent"]
}

// Parse reads a W3C traceparent; the zero SpanContext when s is not one.
func Parse(s string) trace.SpanContext {
	if s == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": s})
	return trace.SpanContextFromContext(ctx)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
