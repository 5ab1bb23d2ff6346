// Package tracing makes grit's OpenTelemetry spans, after the messaging
// semantic conventions: a producer span when a task is enqueued, whose
// context (a W3C traceparent) the store keeps with the task, and a
// consumer span for each attempt, a child of the enqueue's span, linked to
// it and to the previous attempt's span. The engine (Go workers), the
// grit client and the API server share it, so a span means the same
// whoever makes it. A nil *Tracer makes no span and costs nothing: tracing
// is off unless configured (a TracerProvider given, e.g. by package
// otelenv from the OTEL_* variables).
package tracing

import (
	"context"
	"encoding/hex"
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
func (x *Tracer) Enqueue(ctx context.Context, ns []task.NewTask) func([]task.Enqueued, error) {
	if x == nil || len(ns) == 0 {
		return func([]task.Enqueued, error) {}
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
	return func(ts []task.Enqueued, err error) {
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
func (x *Tracer) Submit(ctx context.Context, r *task.NewRun) func(task.Run, error) {
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
	// One SetAttributes call: each grows the span's attributes again.
	attrs := [4]attribute.KeyValue{attrOutcome.String(string(a.Outcome)), attrState.String(string(f.State))}
	n := 2
	if a.Class != "" {
		attrs[2], attrs[3] = attrClass.String(a.Class), attrErrorType.String(a.Class)
		n = 4
	}
	s.SetAttributes(attrs[:n]...)
	switch a.Outcome {
	case task.OutcomeError, task.OutcomeTimeout, task.OutcomeInterrupted:
		s.SetStatus(codes.Error, or(a.Error, string(a.Outcome)))
	}
	f.Trace = Format(s.SpanContext())
	s.End()
}

// Format is sc as a W3C traceparent; "" when sc is not valid. It is
// written directly, not through the propagator and a map: an attempt
// formats one and parses one or two, and the propagator's way cost about
// a microsecond and nine allocations for each.
func Format(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	var b [55]byte // 00-<32 hex>-<16 hex>-<2 hex>
	b[0], b[1], b[2] = '0', '0', '-'
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{byte(sc.TraceFlags())})
	return string(b[:])
}

// Parse reads a W3C traceparent; the zero SpanContext when s is not one.
// What Format writes (version 00, lower-case hex) is read directly; any
// other form goes to the propagator, which knows the specification's
// rules for other versions.
func Parse(s string) trace.SpanContext {
	if s == "" {
		return trace.SpanContext{}
	}
	if sc, ok := parse00(s); ok {
		return sc
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": s})
	return trace.SpanContextFromContext(ctx)
}

// parse00 reads a version 00 traceparent in lower-case hex whose flags
// are sampled or not, as Format writes it; ok is false for anything
// else, valid or not.
func parse00(s string) (trace.SpanContext, bool) {
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' || s[53:] != "00" && s[53:] != "01" {
		return trace.SpanContext{}, false
	}
	var tid trace.TraceID
	var sid trace.SpanID
	var flags [1]byte
	for _, f := range [...]struct {
		dst []byte
		src string
	}{{tid[:], s[3:35]}, {sid[:], s[36:52]}, {flags[:], s[53:55]}} {
		if !lowerHex(f.src) {
			return trace.SpanContext{}, false
		}
		if _, err := hex.Decode(f.dst, []byte(f.src)); err != nil {
			return trace.SpanContext{}, false
		}
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(flags[0]), Remote: true})
	return sc, sc.IsValid()
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
