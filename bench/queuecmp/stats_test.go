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
