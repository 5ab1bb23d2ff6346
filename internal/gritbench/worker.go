package gritbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/task"
)

// The kinds a benchmark worker handles.
const (
	kindNoop  = "noop"  // returns at once
	kindHold  = "hold"  // runs until its attempt is cancelled
	kindStamp = "stamp" // reports how long after its enqueue it started
)

// stamp is a stamp task's args: when it was enqueued, in Unix nanoseconds.
type stamp struct {
	T int64 `json:"t"`
}

// Worker is the body of a benchmark worker process, which the benchmark
// starts as grit bench-worker. It registers the benchmark's kinds on an
// engine over st and speaks a line protocol: it writes "ready" once set up,
// starts working when it reads "start" (and writes "working" once the
// engine listens and claims), writes "started ID NS" when a
// stamp task starts NS nanoseconds after it was enqueued and "finished N"
// as the count of results it has recorded grows, and when its
// input ends stops the engine, without a drain, and returns. cfg is its
// engine's configuration, with the store; it logs nothing unless cfg
// has a logger.
func Worker(ctx context.Context, cfg engine.Config, in io.Reader, out io.Writer) error {
	var mu sync.Mutex
	w := bufio.NewWriter(out)
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, format+"\n", args...)
		w.Flush()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e, err := engine.Assemble(cfg, engine.Observe{})
	if err != nil {
		return err
	}
	for _, h := range handlers(func(id int64, late time.Duration) { say("started %d %d", id, late) }) {
		if err := e.Register(h); err != nil {
			return err
		}
	}
	say("ready %s", e.WorkerID())
	lines := bufio.NewScanner(in)
	if !lines.Scan() || lines.Text() != "start" {
		return errors.New("bench worker: no start line")
	}
	if err := e.Start(ctx); err != nil {
		return err
	}
	say("working")
	done := make(chan struct{})
	go reportFinished(e, say, done)
	for lines.Scan() {
	}
	close(done)
	stopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cancel() // no drain: give back at once what is still held
	return e.Stop(stopCtx)
}

// reportFinished writes "finished N" whenever the count of results the
// engine has recorded changed in the last few milliseconds.
func reportFinished(e *engine.Engine, say func(string, ...any), done <-chan struct{}) {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if n := e.Stats().Finished.Load(); n != last {
			last = n
			say("finished %d", n)
		}
	}
}

// handlers are the benchmark's kinds; started reports a stamp task.
func handlers(started func(id int64, late time.Duration)) []engine.Handler {
	return []engine.Handler{
		{Kind: kindNoop, Fn: func(context.Context, *task.Task) error { return nil }},
		{Kind: kindHold, Fn: func(ctx context.Context, _ *task.Task) error {
			<-ctx.Done()
			return context.Cause(ctx)
		}},
		{Kind: kindStamp, Fn: func(_ context.Context, t *task.Task) error {
			now := time.Now()
			var s stamp
			if err := json.Unmarshal(t.Args, &s); err != nil {
				return err
			}
			started(t.ID, now.Sub(time.Unix(0, s.T)))
			return nil
		}},
	}
}
