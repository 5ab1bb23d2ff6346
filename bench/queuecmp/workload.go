package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// batchSize is the size of the bulk inserts before the throughput
	// workload.
	batchSize = 1000
	// pace is the gap between the inserts of the latency and retry
	// workloads.
	pace = 5 * time.Millisecond
	// pollEvery is how often the throughput workload counts the completed
	// jobs once the handler has run them all.
	pollEvery = 5 * time.Millisecond
	// cleanupLimit bounds the stop of a worker and the drop of a schema,
	// also after an interrupt.
	cleanupLimit = 30 * time.Second
)

// limit bounds one workload of n jobs, so that a broken system fails the
// run instead of hanging it.
func limit(n int) time.Duration { return 2*time.Minute + time.Duration(n)*5*time.Millisecond }

// withQueue runs fn on sys opened on a fresh schema or database file,
// then stops the worker and drops the schema or file.
func withQueue(ctx context.Context, e *env, sys system, tag string, h handlerFunc, fn func(q queue) error) error {
	at, drop, err := e.fresh(ctx, sys, tag)
	if err != nil {
		return err
	}
	q, err := sys.open(ctx, e, at, h)
	opened := err == nil
	if opened {
		err = fn(q)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupLimit)
	defer cancel()
	if opened {
		err = errors.Join(err, q.close(cctx))
	}
	return errors.Join(err, drop(cctx))
}

// throughput times a worker through n jobs inserted before it starts.
// With prof, it writes --cpuprofile.
func throughput(ctx context.Context, e *env, sys system, n int, prof bool) (throughputResult, error) {
	var ran atomic.Int64
	var first atomic.Pointer[time.Time]
	done := make(chan struct{})
	h := func(job, int) error {
		k := ran.Add(1)
		if k == 1 {
			now := time.Now()
			first.Store(&now)
		}
		if k == int64(n) {
			close(done)
		}
		return nil
	}
	var res throughputResult
	err := withQueue(ctx, e, sys, "tp", h, func(q queue) error {
		if err := insertAll(ctx, q, n); err != nil {
			return err
		}
		stop := func() {}
		if prof {
			var err error
			if stop, err = e.profile(sys); err != nil {
				return err
			}
		}
		defer stop()
		// The CPU reading walks /proc (milliseconds): the clock starts after it.
		cpu := e.cpuNow(sys)
		began := time.Now()
		if err := q.start(ctx); err != nil {
			return err
		}
		if err := wait(ctx, done, func() string { return fmt.Sprintf("%d of %d jobs ran", ran.Load(), n) }); err != nil {
			return err
		}
		got, err := waitCompleted(ctx, q, n)
		took := time.Since(began)
		stop()
		res = throughputResult{Jobs: n, Ran: int(ran.Load()), Completed: got, Seconds: took.Seconds(), JobsPerSec: float64(n) / took.Seconds()}
		if f := first.Load(); f != nil {
			res.FirstJobMs = ms(f.Sub(began))
		}
		res.ProcessCPUPerJob, res.ServerCPUPerJob = perJob(cpu, e.cpuNow(sys), n)
		if res.ServerCPUPerJob != nil {
			busy := (res.ProcessCPUPerJob + *res.ServerCPUPerJob) * float64(n) / 1e6 / took.Seconds() / float64(runtime.NumCPU())
			res.CPUBusy = &busy
		}
		return err
	})
	return res, err
}

func insertAll(ctx context.Context, q queue, n int) error {
	return insertAllAt(ctx, q, 0, n, time.Time{})
}

// insertAllAt inserts n jobs, numbered from first, due at at (zero: at
// once), in batches.
func insertAllAt(ctx context.Context, q queue, first, n int, at time.Time) error {
	batch := make([]job, 0, batchSize)
	for i := range n {
		batch = append(batch, job{Seq: first + i, At: at})
		if len(batch) == batchSize || i == n-1 {
			if err := q.insertBatch(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

// waitCompleted polls until the database holds n completed jobs.
func waitCompleted(ctx context.Context, q queue, n int) (int, error) {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		got, err := q.completed(ctx)
		if err != nil || got >= n {
			return got, err
		}
		select {
		case <-ctx.Done():
			return got, fmt.Errorf("%d of %d jobs completed in the database: %w", got, n, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// latency measures, for n jobs inserted one at a time while the worker is
// idle, the time from just before the insert to the start of the handler.
func latency(ctx context.Context, e *env, sys system, n int) (dist, error) {
	r := newRecorder(n)
	h := func(j job, _ int) error {
		now := time.Now().UnixNano()
		if j.Seq == warmUp {
			r.warmedUp()
			return nil
		}
		r.add(j.Seq, time.Duration(now-j.Sent))
		return nil
	}
	err := withQueue(ctx, e, sys, "lat", h, func(q queue) error { return paced(ctx, q, n, r) })
	return summarize(r.values()), err
}

// latencyBehindFuture is latency with future jobs due in an hour inserted
// before the worker starts: scheduled work, retries waiting out their
// backoff and held tasks make such a backlog, which must not slow the
// claims of the work that is due.
func latencyBehindFuture(ctx context.Context, e *env, sys system, n, future int) (dist, error) {
	r := newRecorder(n)
	h := func(j job, _ int) error {
		now := time.Now().UnixNano()
		switch {
		case j.Seq == warmUp:
			r.warmedUp()
		case j.Seq >= 0 && j.Seq < n:
			r.add(j.Seq, time.Duration(now-j.Sent))
		}
		return nil
	}
	err := withQueue(ctx, e, sys, "fut", h, func(q queue) error {
		if err := insertAllAt(ctx, q, n, future, time.Now().Add(time.Hour)); err != nil {
			return err
		}
		return paced(ctx, q, n, r)
	})
	return summarize(r.values()), err
}

var errFirstAttempt = errors.New("queuecmp: attempt 1 fails on purpose")

// retryLateness measures, for n jobs that fail once, how long after its
// due time (the end of attempt 1 + retryDelay) attempt 2 starts.
func retryLateness(ctx context.Context, e *env, sys system, n int) (dist, error) {
	r := newRecorder(n)
	var mu sync.Mutex
	ended := make([]time.Time, n)
	h := func(j job, attempt int) error {
		now := time.Now()
		switch {
		case j.Seq == warmUp:
			r.warmedUp()
		case j.Seq < 0 || j.Seq >= n:
		case attempt == 1:
			mu.Lock()
			ended[j.Seq] = time.Now()
			mu.Unlock()
			return errFirstAttempt
		default:
			mu.Lock()
			end := ended[j.Seq]
			mu.Unlock()
			if !end.IsZero() {
				r.add(j.Seq, now.Sub(end.Add(retryDelay)))
			}
		}
		return nil
	}
	err := withQueue(ctx, e, sys, "retry", h, func(q queue) error { return paced(ctx, q, n, r) })
	return summarize(r.values()), err
}

// paced starts the worker, waits for it to run a warm-up job, then inserts
// n jobs one at a time, pace apart, and waits until r has all n samples.
func paced(ctx context.Context, q queue, n int, r *recorder) error {
	if err := q.start(ctx); err != nil {
		return err
	}
	if err := q.insert(ctx, job{Seq: warmUp, Sent: time.Now().UnixNano()}); err != nil {
		return err
	}
	if err := wait(ctx, r.warm, func() string { return "the warm-up job did not run" }); err != nil {
		return err
	}
	began := time.Now()
	for i := range n {
		if err := sleepUntil(ctx, began.Add(time.Duration(i)*pace)); err != nil {
			return err
		}
		if err := q.insert(ctx, job{Seq: i, Sent: time.Now().UnixNano()}); err != nil {
			return err
		}
	}
	return wait(ctx, r.done, func() string { return fmt.Sprintf("%d of %d samples", r.count(), n) })
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-timer.C:
		return nil
	}
}

// wait waits for done; if ctx ends first, the error says how far it got.
func wait(ctx context.Context, done <-chan struct{}, progress func() string) error {
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", progress(), context.Cause(ctx))
	}
}
