package metrics_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/grit-run/grit/metrics"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// allowed are the only labels grit's metrics may have: each takes as many
// values as a deployment has queues, kinds, groups, outcomes, classes or
// states, never one a task or an attempt.
var allowed = []string{"queue", "kind", "group", "outcome", "class", "state", "scope"}

// TestLabelsStayBounded counts a thousand tasks' attempts, each task with
// its own id, attempt number, worker and lease token, and finds as many
// series as there are queues, kinds, outcomes and classes among them.
func TestLabelsStayBounded(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	outcomes := []task.Outcome{task.OutcomeSuccess, task.OutcomeError, task.OutcomeTimeout}
	for i := range 1000 {
		tk := task.Task{ID: int64(i + 1), Queue: fmt.Sprint("q", i%2), Kind: "resize", Attempt: i%9 + 1,
			LeaseToken: int64(10_000 + i), LeaseOwner: fmt.Sprint("worker-", i), CreatedAt: start}
		f := store.Finish{TaskID: tk.ID, Token: tk.LeaseToken, State: task.Retrying, Attempt: task.Attempt{
			TaskID: tk.ID, Number: tk.Attempt, Worker: tk.LeaseOwner, Outcome: outcomes[i%3], Class: "transient",
			StartedAt: start, EndedAt: start.Add(time.Duration(i) * time.Millisecond), Error: fmt.Sprint("task ", i, " failed"),
		}}
		if i%50 == 0 {
			f.State = task.DeadLetter
		}
		m.Enqueued([]task.Enqueued{{Task: tk}})
		m.Started([]task.Task{tk}, start.Add(time.Second))
		m.Ended(&tk, &f.Attempt, f.State)
		m.Rescued(&tk)
		m.Stale(&tk)
		m.Stuck(&tk)
		m.RateHeld("tenant", 1)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			series++
			for _, l := range s.GetLabel() {
				if f.GetName() == "grit_build_info" { // constant labels: one series a process
					continue
				}
				if !slices.Contains(allowed, l.GetName()) {
					t.Errorf("%s has the label %s=%q: only %v are allowed", f.GetName(), l.GetName(), l.GetValue(), allowed)
				}
			}
		}
	}
	// 2 queues × 3 outcomes for attempts and durations; 2 queues for each
	// of enqueued, start latency, dead letters, rescues, stale results and
	// stuck attempts; the claim errors, the API's busy refusals, the
	// alerts dropped and the two slot gauges; the one scope of tasks held
	// back by a rate; the build's info.
	if want := 2*3*2 + 2*6 + 5 + 1 + 1; series != want {
		t.Errorf("%d series, want %d", series, want)
	}
	if got := sum(t, reg, "grit_dead_letters_total"); got != 20 {
		t.Errorf("dead letters %v, want 20", got)
	}
}

// sum adds up a counter family's samples.
func sum(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range fams {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// TestNewSharesARegistry: a second New on a registry counts into the
// same series (an engine and an API server in one process), and a nil
// Metrics counts nothing without failing.
func TestNewSharesARegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	a, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := metrics.New(reg)
	if err != nil {
		t.Fatalf("a second New on the same registry: %v", err)
	}
	tk := task.Task{Queue: "default", Kind: "k"}
	a.Stale(&tk)
	b.Stale(&tk)
	if n := sum(t, reg, "grit_stale_results_total"); n != 2 {
		t.Errorf("stale results %v, want 2 from the two", n)
	}
	var none *metrics.Metrics
	none.Ended(&tk, &task.Attempt{}, task.Ready)
	none.Slots(1, -1)
}

// TestEndedAllocatesNothing: counting an attempt whose labels were seen
// before costs no allocation, so the success path stays as it was.
func TestEndedAllocatesNothing(t *testing.T) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tk := task.Task{Queue: "default", Kind: "k"}
	f := store.Finish{State: task.Success, Attempt: task.Attempt{Outcome: task.OutcomeSuccess, StartedAt: now, EndedAt: now.Add(time.Millisecond)}}
	m.Ended(&tk, &f.Attempt, f.State)
	if n := testing.AllocsPerRun(100, func() { m.Ended(&tk, &f.Attempt, f.State) }); n != 0 {
		t.Errorf("Ended allocates %v times an attempt", n)
	}
}

// TestBuildInfo: grit_build_info is 1, labelled with the build's version
// and Go release.
func TestBuildInfo(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	if _, err := metrics.New(reg); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "grit_build_info" {
			continue
		}
		m := f.GetMetric()
		labels := map[string]string{}
		for _, l := range m[0].GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if len(m) != 1 || m[0].GetGauge().GetValue() != 1 || labels["version"] == "" || labels["goversion"] != runtime.Version() {
			t.Errorf("grit_build_info is %v, want one series of 1 with the version and %s", m, runtime.Version())
		}
		return
	}
	t.Error("no grit_build_info")
}
