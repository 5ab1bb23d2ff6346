package grit_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// TestTraces collects the spans of a task that fails once and then
// succeeds, and of a process task: a producer span for each enqueue; a
// consumer span for each attempt, a child of its enqueue's, linked to it
// and to the attempt before, with the attempt's number, kind, queue,
// outcome and error class; and TRACEPARENT in the process's environment.
func TestTraces(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	c, err := grit.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"), grit.Config{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var calls atomic.Int32
	err = grit.Handle(c, "flaky", func(ctx context.Context, _ struct{}) error {
		if calls.Add(1) == 1 {
			return retry.Transient(errors.New("upstream answered 503"))
		}
		return nil
	}, grit.HandlerConfig{Policy: "3 1ms"})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, c)
	flaky, err := c.Enqueue(context.Background(), "flaky", struct{}{}, grit.InQueue("mail"))
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, c, flaky.Task.ID, task.Success)
	proc, err := c.Enqueue(context.Background(), task.KindExec, task.Exec{Shell: `echo "$TRACEPARENT"`})
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, c, proc.Task.ID, task.Success)

	spans := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range exp.GetSpans().Snapshots() {
		k := attr(s, "messaging.message.id") + " " + s.SpanKind().String()
		spans[k] = append(spans[k], s)
	}
	id := fmt.Sprint(flaky.Task.ID)
	sent := one(t, spans[id+" producer"], "the flaky task's enqueue")
	if sent.Name() != "send mail" || attr(sent, "messaging.destination.name") != "mail" || attr(sent, "grit.task.kind") != "flaky" {
		t.Errorf("enqueue span %q with %v", sent.Name(), sent.Attributes())
	}
	attempts := spans[id+" consumer"]
	if len(attempts) != 2 {
		t.Fatalf("%d attempt spans for the flaky task, want 2", len(attempts))
	}
	want := []struct{ attempt, outcome, class string }{{"1", "ERROR", "transient"}, {"2", "SUCCESS", ""}}
	for i, a := range attempts {
		if a.Parent().SpanID() != sent.SpanContext().SpanID() || a.SpanContext().TraceID() != sent.SpanContext().TraceID() {
			t.Errorf("attempt %d is not a child of the enqueue's span", i+1)
		}
		got := []string{attr(a, "grit.attempt"), attr(a, "grit.outcome"), attr(a, "grit.error.class")}
		if w := want[i]; got[0] != w.attempt || got[1] != w.outcome || got[2] != w.class ||
			a.Name() != "process mail" || attr(a, "grit.task.kind") != "flaky" || attr(a, "messaging.destination.name") != "mail" {
			t.Errorf("attempt span %d: %q %v, want attempt, outcome and class %v", i+1, a.Name(), got, w)
		}
		links := map[string]trace.SpanID{}
		for _, l := range a.Links() {
			for _, kv := range l.Attributes {
				if kv.Key == "grit.link" {
					links[kv.Value.AsString()] = l.SpanContext.SpanID()
				}
			}
		}
		if links["enqueue"] != sent.SpanContext().SpanID() {
			t.Errorf("attempt %d does not link to its enqueue: %v", i+1, a.Links())
		}
		if i == 0 && len(links) != 1 {
			t.Errorf("the first attempt links to %v, want its enqueue alone", links)
		}
		if i == 1 && links["previous_attempt"] != attempts[0].SpanContext().SpanID() {
			t.Errorf("the second attempt does not link to the first: %v", a.Links())
		}
	}

	run := one(t, spans[fmt.Sprint(proc.Task.ID)+" consumer"], "the process task's attempt")
	as, err := c.Attempts(context.Background(), proc.Task.ID)
	if err != nil || len(as) != 1 {
		t.Fatalf("attempts %v, %v", as, err)
	}
	sc := run.SpanContext()
	wantParent := fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID())
	// The output is kept under a "--- stdout" header: its last line is the echo.
	lines := strings.Split(strings.TrimSpace(as[0].Output), "\n")
	if got := lines[len(lines)-1]; got != wantParent {
		t.Errorf("the process saw TRACEPARENT=%q, want its attempt's span %q", got, wantParent)
	}
}

func one(t *testing.T, ss []sdktrace.ReadOnlySpan, what string) sdktrace.ReadOnlySpan {
	t.Helper()
	if len(ss) != 1 {
		t.Fatalf("%d spans for %s, want 1", len(ss), what)
	}
	return ss[0]
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if kv.Key == attribute.Key(key) {
			return kv.Value.Emit()
		}
	}
	return ""
}
