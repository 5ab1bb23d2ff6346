package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/metrics"
)

// TestMetricsCountRemoteWorkers: the server counts its remote workers as
// an engine counts its own, through the same metrics: the task enqueued
// through the API, its two claims' waits, the attempt a rescue ended,
// the success, the rescue, and the late report of the worker that lost
// its lease.
func TestMetricsCountRemoteWorkers(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, server.Config{Rescue: 50 * time.Millisecond, Metrics: m}, "")
	tk := h.enqueue(t, &pb.NewTask{Kind: "k", Queue: "mail"})
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "gone", Kinds: []string{"k"}, Lease: dpb(time.Second)})
	if err != nil || len(r.GetTasks()) != 1 {
		t.Fatalf("claim %v, %v", r, err)
	}
	c := h.claimOne(t, "heir", "k") // after the rescue of gone's lease
	if _, err := h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: c.GetId(), WorkerId: c.GetLeaseOwner(), LeaseToken: c.GetLeaseToken()}); err != nil {
		t.Fatal(err)
	}
	_, err = h.workers.Complete(ctx(t), &pb.CompleteRequest{TaskId: tk.GetId(), WorkerId: r.GetTasks()[0].GetLeaseOwner(), LeaseToken: r.GetTasks()[0].GetLeaseToken()})
	wantCode(t, err, codes.FailedPrecondition)

	got := samples(t, reg)
	for k, v := range map[string]float64{
		`grit_tasks_enqueued_total{kind="k",queue="mail"}`:                              1,
		`grit_attempts_total{class="none",kind="k",outcome="INTERRUPTED",queue="mail"}`: 1,
		`grit_attempts_total{class="none",kind="k",outcome="SUCCESS",queue="mail"}`:     1,
		`grit_lease_rescues_total{kind="k",queue="mail"}`:                               1,
		`grit_stale_results_total{kind="k",queue="mail"}`:                               1,
		`grit_attempt_start_latency_seconds_count{kind="k",queue="mail"}`:               2,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}

// samples reads a registry's counters and histograms' counts, each named
// as name{label="value",…}.
func samples(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			name, labels := f.GetName(), ""
			for i, l := range m.GetLabel() {
				if i > 0 {
					labels += ","
				}
				labels += fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
			}
			v := m.GetCounter().GetValue()
			if m.Histogram != nil {
				name, v = name+"_count", float64(m.GetHistogram().GetSampleCount())
			}
			if labels != "" {
				name += "{" + labels + "}"
			}
			out[name] = v
		}
	}
	return out
}
