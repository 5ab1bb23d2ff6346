package engine

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

func (p *executors) counts() (made, idle int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.made, len(p.idle)
}

// TestRunnersAreReused works many tasks one after another: each attempt
// runs on a executor that an earlier attempt left idle, so no more executors
// are started than the engine has slots.
func TestRunnersAreReused(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cfg := testConfig(st)
	e := start(t, cfg, Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }})
	for range 30 {
		tk := enqueue(t, st, task.NewTask{Kind: "ok"})
		e.Wake()
		waitState(t, st, tk.ID, task.Success)
	}
	if made, _ := e.executors.counts(); made < 1 || made > cfg.Concurrency {
		t.Errorf("%d executors started for 30 tasks one at a time; want 1 to %d (one per slot at most)", made, cfg.Concurrency)
	}
}

// TestHandlerLabelsStayWithTheirAttempt has a handler label its goroutine
// for the profiler, as pprof.Do and pprof.SetGoroutineLabels do, and
// checks that the label goes when the attempt ends: the executor that ran it
// runs the next attempt, whose samples would be counted under it.
func TestHandlerLabelsStayWithTheirAttempt(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	label := fmt.Sprintf("attempt-%d", time.Now().UnixNano())
	e := start(t, testConfig(st), Handler{Kind: "labels", Fn: func(ctx context.Context, _ *task.Task) error {
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("grit_test", label)))
		return nil
	}})
	tk := enqueue(t, st, task.NewTask{Kind: "labels"})
	waitState(t, st, tk.ID, task.Success)
	labelled := func() bool {
		var b bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
			t.Fatal(err)
		}
		return strings.Contains(b.String(), label)
	}
	waitFor(t, 5*time.Second, func() bool { _, idle := e.executors.counts(); return idle == 1 && !labelled() },
		func() string {
			_, idle := e.executors.counts()
			return fmt.Sprintf("%d idle executors, a goroutine labelled %s: %v; want the executor idle and unlabelled", idle, label, labelled())
		})
}

// TestIdleRunnersRetire retires the idle executors: their goroutines end,
// and the next task starts a new one.
func TestIdleRunnersRetire(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	e := start(t, testConfig(st), Handler{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }})
	tk := enqueue(t, st, task.NewTask{Kind: "ok"})
	waitState(t, st, tk.ID, task.Success)
	waitFor(t, 5*time.Second, func() bool { _, idle := e.executors.counts(); return idle == 1 },
		func() string {
			made, idle := e.executors.counts()
			return fmt.Sprintf("%d executors made, %d idle", made, idle)
		})

	e.retireIdle(time.Now().Add(-time.Hour)) // parked since: none retires
	if _, idle := e.executors.counts(); idle != 1 {
		t.Fatalf("%d idle executors after retiring those idle for an hour; want the one parked just now", idle)
	}
	e.retireIdle(time.Now().Add(time.Second))
	waitFor(t, 5*time.Second, func() bool { return e.executors.live.Load() == 0 },
		func() string { return fmt.Sprintf("%d executors still live", e.executors.live.Load()) })

	tk = enqueue(t, st, task.NewTask{Kind: "ok"})
	e.Wake()
	waitState(t, st, tk.ID, task.Success)
	if made, _ := e.executors.counts(); made != 2 {
		t.Errorf("%d executors made; want 2: the retired one and a new one", made)
	}
}

// TestStopEndsRunners stops an engine whose handler is stuck: the idle
// executors end at the stop, and the stuck one when its handler returns.
func TestStopEndsRunners(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	cfg := testConfig(st)
	release := make(chan struct{})
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []Handler{
		{Kind: "ok", Fn: func(context.Context, *task.Task) error { return nil }},
		{Kind: "stuck", Policy: &retry.Never, Fn: func(context.Context, *task.Task) error {
			<-release // ignores its context
			return nil
		}},
	} {
		if err := e.Register(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	stuck := enqueue(t, st, task.NewTask{Kind: "stuck"})
	e.Wake()
	waitState(t, st, stuck.ID, task.Running)
	for range 3 { // on another executor, idle at the stop
		tk := enqueue(t, st, task.NewTask{Kind: "ok"})
		e.Wake()
		waitState(t, st, tk.ID, task.Success)
	}
	if live := e.executors.live.Load(); live < 2 {
		t.Fatalf("%d executors live; want the stuck one and at least one idle", live)
	}
	// A short drain: the stuck attempt is released, then abandoned after
	// its grace.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() bool { return e.executors.live.Load() == 1 },
		func() string {
			return fmt.Sprintf("%d executors live after the stop; want only the stuck one", e.executors.live.Load())
		})
	close(release)
	waitFor(t, 5*time.Second, func() bool { return e.executors.live.Load() == 0 },
		func() string {
			return fmt.Sprintf("%d executors live after the stuck handler returned", e.executors.live.Load())
		})
}
