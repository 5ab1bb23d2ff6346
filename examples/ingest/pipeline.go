package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// The pipeline's topics.
const (
	topicStarted   = "IngestRunStarted"
	topicNextBatch = "NextBatchRequested"
	topicReady     = "IngesterBatchReady"
	topicJob       = "ClusterJobRequested"
)

// config is one ingest run.
type config struct {
	DSN          string
	Batches      int
	JobsPerBatch int
	Capacity     int // jobs the cluster runs at once
	JobTime      time.Duration
	MaxFailures  int   // failed deliveries the run tolerates
	BadImages    []int // jobs (numbered from 1 across the run) whose image does not exist
	EvictEvery   int   // every n-th job started is evicted once
}

// report is how the run went.
type report struct {
	Run         task.State
	Jobs        int // job deliveries made
	Succeeded   int
	Failed      []string // the failed jobs' errors
	Cancelled   int
	Peak        int // the most jobs the cluster ran at once
	Rejected    int // jobs the cluster had no room for
	Utilization float64
	// FailedAtFirst counts the failed jobs that failed on their first
	// attempt; MinRetryGap is the shortest time between a job's rejection
	// and its next attempt.
	FailedAtFirst int
	MinRetryGap   time.Duration
	Elapsed       time.Duration
}

type nextBatch struct {
	Batch int `json:"batch"`
}

type batchReady struct {
	Batch int   `json:"batch"`
	Jobs  []job `json:"jobs"`
}

// jobPolicy retries resource pressure after 200ms doubling to 2s (the
// default, 60s doubling to 5m, is for real clusters), with equal jitter:
// each wait at least half its step, so that no rejected job comes back at
// once (full jitter may draw a wait near zero). A rejection is a
// deferral, which uses no attempt (up to retry.DefaultMaxDeferrals of
// them); other failures are retried up to the 20th attempt.
var jobPolicy = retry.Policy{MaxAttempts: 20,
	Backoff:  retry.Exponential{Min: 100 * time.Millisecond, Max: time.Second},
	Resource: retry.Exponential{Min: 200 * time.Millisecond, Max: 2 * time.Second, Jitter: retry.JitterEqual}}

// runIngest starts an ingest run, works it to its end and reports.
func runIngest(ctx context.Context, cfg config, log io.Writer) (report, error) {
	// Retries may go at the rate the cluster finishes jobs: the budget's
	// floor (the default, one a second, is for a downstream of unknown
	// capacity).
	jobsPerSec := float64(cfg.Capacity) / cfg.JobTime.Seconds()
	c, err := grit.Open(ctx, cfg.DSN, grit.Config{Concurrency: 3 * cfg.Capacity,
		Protection: grit.Protection{PressureBase: 100 * time.Millisecond, PressureMax: time.Second,
			RetryBudget: grit.BudgetRates{Ratio: 0.2, Floor: jobsPerSec, Burst: float64(cfg.Capacity)}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return report{}, err
	}
	defer c.Close()
	cl := newCluster(cfg.Capacity, cfg.JobTime, cfg.EvictEvery)
	if err := pipeline(ctx, c, cfg, cl, log); err != nil {
		return report{}, err
	}
	begin := time.Now()
	run, err := c.SubmitRun(ctx, task.NewRun{Name: "ingest", MaxFailures: cfg.MaxFailures,
		Tasks: []task.NewTask{{Name: "start", Kind: "StartIngest"}}})
	if err != nil {
		return report{}, err
	}
	if err := c.Start(ctx); err != nil {
		return report{}, err
	}
	defer c.Stop(context.WithoutCancel(ctx))
	for {
		r, err := c.Run(ctx, run.ID)
		if err != nil {
			return report{}, err
		}
		if r.State.Terminal() {
			return finish(ctx, c, r, cl, time.Since(begin))
		}
		select {
		case <-ctx.Done():
			return report{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pipeline subscribes each stage to its topic and registers its handler.
func pipeline(ctx context.Context, c *grit.Client, cfg config, cl *cluster, log io.Writer) error {
	for _, s := range []task.Subscription{
		{Topic: topicStarted, Kind: "Notice"},
		{Topic: topicNextBatch, Kind: "Ingester"},
		{Topic: topicReady, Kind: "HookRunner"},
		{Topic: topicJob, Kind: "ClusterJob", Group: "cluster"},
	} {
		if err := c.Subscribe(ctx, s); err != nil {
			return err
		}
	}
	bad := func(n int) bool { return slices.Contains(cfg.BadImages, n) }
	return firstErr(
		grit.Handle(c, "StartIngest", func(ctx context.Context, _ struct{}) error {
			return firstErr(grit.Publish(ctx, topicStarted, map[string]int{"batches": cfg.Batches}),
				grit.Publish(ctx, topicNextBatch, nextBatch{Batch: 1}))
		}, grit.HandlerConfig{}),
		grit.Handle(c, "Notice", func(ctx context.Context, n map[string]int) error {
			fmt.Fprintf(log, "ingest run started: %d batches of %d jobs, cluster capacity %d\n", n["batches"], cfg.JobsPerBatch, cfg.Capacity)
			return nil
		}, grit.HandlerConfig{}),
		grit.Handle(c, "Ingester", func(ctx context.Context, b nextBatch) error {
			ready := batchReady{Batch: b.Batch}
			for i := range cfg.JobsPerBatch {
				n := (b.Batch-1)*cfg.JobsPerBatch + i + 1
				ready.Jobs = append(ready.Jobs, job{Batch: b.Batch, N: i + 1, BadImage: bad(n)})
			}
			err := grit.Publish(ctx, topicReady, ready)
			if err == nil && b.Batch < cfg.Batches {
				err = grit.Publish(ctx, topicNextBatch, nextBatch{Batch: b.Batch + 1})
			}
			return err
		}, grit.HandlerConfig{}),
		grit.Handle(c, "HookRunner", func(ctx context.Context, b batchReady) error {
			for _, j := range b.Jobs {
				if err := grit.Publish(ctx, topicJob, j); err != nil {
					return err
				}
			}
			return nil
		}, grit.HandlerConfig{}),
		grit.Handle(c, "ClusterJob", func(ctx context.Context, j job) error {
			return cl.run(ctx, j)
		}, grit.HandlerConfig{RetryPolicy: &jobPolicy, Group: "cluster", Timeout: time.Minute}),
	)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// finish gathers the report of an ended run.
func finish(ctx context.Context, c *grit.Client, r task.Run, cl *cluster, elapsed time.Duration) (report, error) {
	ts, err := c.Tasks(ctx, task.Filter{RunID: r.ID, Kind: "ClusterJob"})
	if err != nil {
		return report{}, err
	}
	rep := report{Run: r.State, Jobs: len(ts), Elapsed: elapsed}
	for _, t := range ts {
		switch t.State {
		case task.Success:
			rep.Succeeded++
		case task.Failed, task.DeadLetter:
			rep.Failed = append(rep.Failed, t.LastError)
			if t.Attempt == 1 {
				rep.FailedAtFirst++
			}
		case task.Cancelled:
			rep.Cancelled++
		}
	}
	rep.Peak, rep.Rejected, rep.Utilization = cl.stats()
	for _, t := range ts {
		as, err := c.Attempts(ctx, t.ID)
		if err != nil {
			return report{}, err
		}
		for i := 1; i < len(as); i++ {
			if as[i-1].Class == retry.ClassResource.String() {
				gap := as[i].StartedAt.Sub(as[i-1].EndedAt)
				if rep.MinRetryGap == 0 || gap < rep.MinRetryGap {
					rep.MinRetryGap = gap
				}
			}
		}
	}
	return rep, nil
}

func (r report) print(w io.Writer) {
	b, _ := json.MarshalIndent(r, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}
