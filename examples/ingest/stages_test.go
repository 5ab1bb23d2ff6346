package main

import (
	"io"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/grittest"
	"github.com/grit-run/grit/task"
)

// stages is a grittest client with the pipeline's subscriptions and
// handlers, for a run of two batches of three jobs, the fifth job's
// image bad.
func stages(t *testing.T) *grittest.Client {
	t.Helper()
	c := grittest.NewClient(t, grit.Config{})
	cfg := config{Batches: 2, JobsPerBatch: 3, Capacity: 2, JobTime: time.Millisecond, BadImages: []int{5}}
	if err := pipeline(t.Context(), c.Client, cfg, newCluster(cfg.Capacity, cfg.JobTime, 0), io.Discard); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestIngesterStage: the ingester publishes its batch's jobs, numbered
// across the run, and asks for the next batch, but not after the last;
// its events' subscriber, the hook runner, gets a delivery for each batch.
func TestIngesterStage(t *testing.T) {
	t.Parallel()
	c := stages(t)
	for _, b := range []int{1, 2} {
		if r := c.Work(t, "Ingester", nextBatch{Batch: b}); r.Task.State != task.Success {
			t.Fatalf("batch %d: Ingester %s (%q), want SUCCESS", b, r.Task.State, r.Task.LastError)
		}
	}
	ready := grittest.RequirePublished(t, c, topicReady, func(b batchReady) bool { return b.Batch == 2 })
	if jobs := ready.Payload.Jobs; len(jobs) != 3 || jobs[0].BadImage || !jobs[1].BadImage {
		t.Errorf("batch 2's jobs %+v: want three, the second (the run's fifth) with the bad image", jobs)
	}
	next := grittest.Published[nextBatch](t, c, topicNextBatch)
	if len(next) != 1 || next[0].Payload.Batch != 2 {
		t.Errorf("next batches asked for: %+v: want batch 2 alone, none after the last", next)
	}
	if hooks := grittest.Enqueued[batchReady](t, c, "HookRunner"); len(hooks) != 2 {
		t.Errorf("%d hook runner deliveries, want one per batch", len(hooks))
	}
}

// TestHookRunnerStage: the hook runner puts each job of its batch on the
// cluster: one ClusterJob task each, in the cluster's group, none run.
func TestHookRunnerStage(t *testing.T) {
	t.Parallel()
	c := stages(t)
	b := batchReady{Batch: 1, Jobs: []job{{Batch: 1, N: 1}, {Batch: 1, N: 2}, {Batch: 1, N: 3, BadImage: true}}}
	if r := c.Work(t, "HookRunner", b); r.Task.State != task.Success {
		t.Fatalf("HookRunner %s (%q), want SUCCESS", r.Task.State, r.Task.LastError)
	}
	jobs := grittest.Enqueued[job](t, c, "ClusterJob")
	if len(jobs) != 3 {
		t.Fatalf("%d cluster jobs, want 3", len(jobs))
	}
	for _, j := range jobs {
		if j.Group != "cluster" || j.State != task.Ready {
			t.Errorf("%s is in group %q, %s: want the cluster's, waiting", j.Args, j.Group, j.State)
		}
	}
	bad := grittest.RequireEnqueued(t, c, "ClusterJob", func(j job) bool { return j.BadImage })
	if r := c.WorkTask(t, bad.ID); r.Task.State != task.Failed || r.Attempt.Number != 1 {
		t.Errorf("the bad image's job is %s after attempt %d, want FAILED at once", r.Task.State, r.Attempt.Number)
	}
}
