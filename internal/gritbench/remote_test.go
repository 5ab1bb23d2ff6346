package gritbench

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/grit-run/grit/api/client"
	"github.com/grit-run/grit/api/gritv1"
)

// checkRemote checks the remote figures of a run with cfg: both modes
// measured, the ratios taken, claims and reports no larger than asked.
// It asserts no speed.
func checkRemote(t *testing.T, cfg Config, r Result) {
	t.Helper()
	w := r.RemoteWork
	if w.RemoteTasks != cfg.Tasks || w.RemoteWorkers != cfg.RemoteWorkers || w.RemoteClaim != cfg.RemoteClaim {
		t.Errorf("remote sizes %+v, want %d tasks, %d workers, claims of %d", w, cfg.Tasks, cfg.RemoteWorkers, cfg.RemoteClaim)
	}
	if w.RemoteBatchedPerSec <= 0 || w.RemoteSinglePerSec <= 0 || w.RemoteBatchedVsSingle <= 0 || w.RemoteBatchedVsGo <= 0 || w.RemoteSingleVsGo <= 0 {
		t.Errorf("remote figures %+v", w)
	}
	// A report carries a claim's results: as many as the claim got.
	if w.RemoteClaimMean < 1 || w.RemoteClaimMean > float64(cfg.RemoteClaim) || w.RemoteReportMean != w.RemoteClaimMean {
		t.Errorf("%v tasks per claim, %v results per report, claims of up to %d", w.RemoteClaimMean, w.RemoteReportMean, cfg.RemoteClaim)
	}
}

// TestRemoteWork runs only the remote step, with more workers than the
// tasks fill claims for; workRemotely's own check found every task
// SUCCESS in the store.
func TestRemoteWork(t *testing.T) {
	t.Parallel()
	cfg := Config{Tasks: 250, Batch: 100, RemoteWorkers: 3, RemoteClaim: 40}
	cfg.defaults()
	r := Result{WorkPerSec: 1}
	if err := remoteWork(context.Background(), sqliteTargets(t), cfg, &r); err != nil {
		t.Fatal(err)
	}
	checkRemote(t, cfg, r)
	t.Logf("%+v", r.RemoteWork)
}

// TestRemoteWorkFailsOnARefusal: a result the server refuses (here under
// a token no claim gave) ends the bench with the server's reason, instead
// of a figure.
func TestRemoteWorkFailsOnARefusal(t *testing.T) {
	t.Parallel()
	stale := func(ctx context.Context, c *client.Client, worker string, ts []*gritv1.Task) error {
		for _, tk := range ts {
			tk.LeaseToken += 1 << 40
		}
		return reportClaim(ctx, c, worker, ts)
	}
	cfg := Config{Tasks: 10, Batch: 10, RemoteWorkers: 2, RemoteClaim: 5}
	_, _, err := workRemotely(context.Background(), sqliteTargets(t), cfg, stale)
	if err == nil || !strings.Contains(err.Error(), "worker bench-remote-") || !strings.Contains(err.Error(), "the task never had that token") {
		t.Errorf("err %v", err)
	}
}

// TestRemoteWorkChecksTheStore finds a task left unworked: the mode
// claims and says nothing, so the store does not hold them all SUCCESS.
func TestRemoteWorkChecksTheStore(t *testing.T) {
	t.Parallel()
	silent := func(context.Context, *client.Client, string, []*gritv1.Task) error { return nil }
	cfg := Config{Tasks: 6, Batch: 10, RemoteWorkers: 1, RemoteClaim: 6}
	_, _, err := workRemotely(context.Background(), sqliteTargets(t), cfg, silent)
	if err == nil || !strings.Contains(err.Error(), "0 of them SUCCESS") || errors.Is(err, context.Canceled) {
		t.Errorf("err %v", err)
	}
}
