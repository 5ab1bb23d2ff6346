package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/task"
)

func testConfig(t *testing.T) config {
	return config{DSN: "sqlite:" + filepath.Join(t.TempDir(), "grit.db"), Batches: 4, JobsPerBatch: 6, Capacity: 3,
		JobTime: 60 * time.Millisecond, MaxFailures: 2, EvictEvery: 5}
}

// TestIngestSettlesAtCapacity: every good job succeeds; the cluster never
// runs more than its capacity; a rejected job is not retried at once; the
// bad image fails its job on its first attempt, and the run, with a failed
// delivery, ends FAILED.
func TestIngestSettlesAtCapacity(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.BadImages = []int{4}
	rep, err := runIngest(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Jobs != 24 || rep.Succeeded != 23 || len(rep.Failed) != 1 || !strings.Contains(rep.Failed[0], "ErrImagePull") || rep.FailedAtFirst != 1 {
		t.Errorf("%d jobs, %d succeeded, failed %v (%d at the first attempt): want 24, 23, the bad image's at once", rep.Jobs, rep.Succeeded, rep.Failed, rep.FailedAtFirst)
	}
	if rep.Peak != cfg.Capacity {
		t.Errorf("peak %d jobs on the cluster, want its capacity %d", rep.Peak, cfg.Capacity)
	}
	if rep.Rejected > 0 && rep.MinRetryGap < 50*time.Millisecond {
		t.Errorf("a rejected job was retried %v after its rejection: want the resource backoff", rep.MinRetryGap)
	}
	if rep.Run != task.Failed {
		t.Errorf("run %s with a failed delivery, want FAILED", rep.Run)
	}
	t.Logf("%+v", rep)
}

// TestIngestFailsPastMaxFailures: three bad images in the first batch pass
// max_failures 2: the run fails before its later batches are ingested.
func TestIngestFailsPastMaxFailures(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.BadImages = []int{1, 2, 3}
	rep, err := runIngest(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Run != task.Failed || len(rep.Failed) < 3 || rep.Jobs+rep.Cancelled == 24 && rep.Succeeded == 21 {
		t.Errorf("run %s, %d jobs (%d succeeded, %d failed, %d cancelled): want it FAILED early, not every job run",
			rep.Run, rep.Jobs, rep.Succeeded, len(rep.Failed), rep.Cancelled)
	}
	t.Logf("%+v", rep)
}
