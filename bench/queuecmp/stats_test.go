package main

import (
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, c := range []struct {
		samples []time.Duration
		q       float64
		want    time.Duration
	}{
		{hundred, 0.50, 50 * time.Millisecond},
		{hundred, 0.90, 90 * time.Millisecond},
		{hundred, 0.99, 99 * time.Millisecond},
		{hundred, 1, 100 * time.Millisecond},
		{hundred[:1], 0.99, time.Millisecond},
		{hundred[:3], 0.50, 2 * time.Millisecond},
		{hundred[:20], 0.99, 20 * time.Millisecond},
	} {
		if got := quantile(c.samples, c.q); got != c.want {
			t.Errorf("quantile of %d samples at %v = %v, want %v", len(c.samples), c.q, got, c.want)
		}
	}
}

func TestSummarizeEmpty(t *testing.T) {
	if d := summarize(nil); d != (dist{}) {
		t.Errorf("summarize(nil) = %+v", d)
	}
}

func TestRecorderIgnoresDuplicates(t *testing.T) {
	r := newRecorder(2)
	r.add(0, time.Millisecond)
	r.add(0, time.Hour)
	r.add(7, time.Hour)
	if r.count() != 1 {
		t.Fatalf("count %d after one job twice and one out of range, want 1", r.count())
	}
	r.add(1, 2*time.Millisecond)
	select {
	case <-r.done:
	default:
		t.Fatal("done not closed after every job had its sample")
	}
	if d := summarize(r.values()); d.Samples != 2 || d.Max != 2 {
		t.Errorf("summary %+v", d)
	}
}

func TestMedianRun(t *testing.T) {
	run := func(jps, firstMs float64) throughputResult {
		return throughputResult{JobsPerSec: jps, FirstJobMs: firstMs}
	}
	for _, c := range []struct {
		runs      []throughputResult
		wantJPS   float64
		wantFirst float64
	}{
		{[]throughputResult{run(50, 1)}, 50, 1},
		{[]throughputResult{run(90, 1), run(30, 2), run(60, 3)}, 60, 3},
		{[]throughputResult{run(90, 1), run(30, 2), run(60, 3), run(70, 4)}, 60, 3}, // the slower of the middle two
		{[]throughputResult{run(40, 1), run(40, 2)}, 40, 1},
	} {
		got := medianRun(c.runs)
		if got.JobsPerSec != c.wantJPS || got.FirstJobMs != c.wantFirst {
			t.Errorf("median of %v: %v jobs/s, first job %v ms; want %v and %v", c.runs, got.JobsPerSec, got.FirstJobMs, c.wantJPS, c.wantFirst)
		}
		if len(got.Rounds) != len(c.runs) {
			t.Fatalf("median of %v keeps %d rounds, want %d", c.runs, len(got.Rounds), len(c.runs))
		}
		for i, r := range c.runs {
			if got.Rounds[i] != r.JobsPerSec {
				t.Errorf("round %d: %v jobs/s, want %v (rounds in order)", i, got.Rounds[i], r.JobsPerSec)
			}
		}
	}
}
