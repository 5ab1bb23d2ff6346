package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/grit-run/grit/metrics"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// freeClaims is a store whose claims, heartbeats and results cost nothing:
// it hands out n prepared tasks and counts their results, so that a
// benchmark times the engine alone. Everything else goes to a real store.
type freeClaims struct {
	*sqlite.Store
	args     json.RawMessage
	mu       sync.Mutex
	claimed  int64
	n        int64
	finished atomic.Int64
	all      chan struct{}
}

func (f *freeClaims) Claim(_ context.Context, req store.ClaimRequest) ([]task.Task, error) {
	f.mu.Lock()
	k := min(int64(req.Limit), f.n-f.claimed)
	first := f.claimed
	f.claimed += k
	f.mu.Unlock()
	ts := make([]task.Task, k)
	for i := range ts {
		id := first + int64(i) + 1
		ts[i] = task.Task{ID: id, Kind: "noop", Args: f.args, Queue: "default", State: task.Running,
			Attempt: 1, LeaseToken: id, LeaseOwner: req.Worker}
	}
	return ts, nil
}

func (f *freeClaims) NextDue(context.Context, store.ClaimRequest) (time.Time, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Time{}, f.claimed < f.n, nil
}

func (f *freeClaims) Heartbeat(context.Context, string, time.Duration, []store.Lease) ([]store.Lease, error) {
	return nil, nil
}

func (f *freeClaims) Finish(_ context.Context, fs []store.Finish) ([]error, error) {
	if f.finished.Add(int64(len(fs))) == f.n {
		close(f.all)
	}
	return make([]error, len(fs)), nil
}

// BenchmarkEngine times what the engine does for a task, from claim to
// recorded result, with a store that costs nothing: b.N tasks worked with
// Concurrency 1000, as in the comparison with River. noop's handler does
// nothing; json's decodes its arguments, as grit.Handle does, which needs
// a deeper stack than the engine's own code. noop+metrics counts into
// Prometheus metrics (Config.Metrics), whose cost per attempt it shows.
func BenchmarkEngine(b *testing.B) {
	noop := func(context.Context, *task.Task) error { return nil }
	for _, c := range []struct {
		name    string
		fn      func(context.Context, *task.Task) error
		metrics bool
	}{
		{"noop", noop, false},
		{"noop+metrics", noop, true},
		{"json", func(_ context.Context, t *task.Task) error {
			var v struct {
				Seq  int   `json:"seq"`
				Sent int64 `json:"sent,omitempty"`
			}
			return json.Unmarshal(t.Args, &v)
		}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			st := &freeClaims{Store: newSQLite(b), args: json.RawMessage(`{"seq":12345}`), n: int64(b.N), all: make(chan struct{})}
			cfg := testConfig(st)
			cfg.Concurrency = 1000
			cfg.Logger = slog.New(slog.DiscardHandler)
			if c.metrics {
				m, err := metrics.New(prometheus.NewRegistry())
				if err != nil {
					b.Fatal(err)
				}
				cfg.Metrics = m
			}
			e, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if err := e.Register(Handler{Kind: "noop", Fn: c.fn}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			if err := e.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			<-st.all
			b.StopTimer()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := e.Stop(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}
