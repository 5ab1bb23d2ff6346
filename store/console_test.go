package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func TestSeriesBuckets(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 10, 30, 0, 0, time.UTC)
	cases := []struct {
		since time.Time
		step  time.Duration
		n     int // buckets; -1: invalid
	}{
		{now.Add(-2 * time.Hour), time.Hour, 3},     // the last holds now
		{now.Add(-2*time.Hour + 1), time.Hour, 2},   // now is in the second
		{now, time.Minute, 1},                       // a window of an instant
		{now.Add(time.Second), time.Minute, 0},      // since is ahead of the store's clock
		{now.Add(-time.Hour), 0, -1},                // no step
		{now.Add(-time.Hour), -time.Minute, -1},     // a negative step
		{now.Add(-time.Hour), time.Millisecond, -1}, // 3,600,001 buckets
		{now.Add(-9999 * time.Second), time.Second, store.MaxSeriesBuckets},
	}
	for _, c := range cases {
		bs, err := store.SeriesBuckets(c.since, now, c.step)
		if c.n < 0 {
			if !errors.Is(err, task.ErrInvalid) {
				t.Errorf("since %v, step %v: error %v, want one matching task.ErrInvalid", c.since, c.step, err)
			}
			continue
		}
		if err != nil || len(bs) != c.n {
			t.Errorf("since %v, step %v: %d buckets (%v), want %d", c.since, c.step, len(bs), err, c.n)
			continue
		}
		for i, b := range bs {
			if !b.At.Equal(c.since.Add(time.Duration(i)*c.step)) || b.Outcomes == nil || len(b.Outcomes) != 0 {
				t.Errorf("since %v, step %v: bucket %d is %+v, want an empty one at %v", c.since, c.step, i, b, c.since.Add(time.Duration(i)*c.step))
			}
		}
	}
}

func TestAddToSeries(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 10, 30, 0, 0, time.UTC)
	bs, err := store.SeriesBuckets(now.Add(-2*time.Hour), now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	store.AddToSeries(bs, 0, task.OutcomeError, 2)
	store.AddToSeries(bs, 0, task.OutcomeError, 1)
	store.AddToSeries(bs, 2, task.OutcomeSuccess, 5)
	store.AddToSeries(bs, 7, task.OutcomeSuccess, 1)  // ended after now was read: the last bucket
	store.AddToSeries(bs, -1, task.OutcomeTimeout, 1) // before the window: nowhere
	if bs[0].Outcomes[task.OutcomeError] != 3 || len(bs[0].Outcomes) != 1 || len(bs[1].Outcomes) != 0 ||
		bs[2].Outcomes[task.OutcomeSuccess] != 6 || len(bs[2].Outcomes) != 1 {
		t.Errorf("buckets %+v, want 3 errors in the first, none in the second, 6 successes in the last", bs)
	}
	store.AddToSeries(nil, 0, task.OutcomeError, 1) // no buckets: nothing to count in
}

func TestValidateAudit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		e  store.AuditEntry
		ok bool
	}{
		{store.AuditEntry{Who: "local", Action: "replay", Target: "task 1", Count: 1}, true},
		{store.AuditEntry{Who: "local", Action: "breaker close"}, true},
		{store.AuditEntry{Action: "replay"}, false},
		{store.AuditEntry{Who: "\t", Action: "replay"}, false},
		{store.AuditEntry{Who: "local"}, false},
		{store.AuditEntry{Who: "local", Action: "replay", Count: -1}, false},
	} {
		err := store.ValidateAudit(c.e)
		if c.ok != (err == nil) || err != nil && !errors.Is(err, task.ErrInvalid) {
			t.Errorf("ValidateAudit(%+v) = %v, want ok %v (else task.ErrInvalid)", c.e, err, c.ok)
		}
	}
}
