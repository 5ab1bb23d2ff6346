package engine

import (
	"math/rand/v2"
	"time"

	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/store"
)

// maxPruneRounds bounds the rounds of one turn: a backlog of finished
// tasks (a retention just shortened, a store that never pruned) goes
// down a few batches a minute on each worker, never in one long burst
// that would compete with the claims.
const maxPruneRounds = 10

// pruneLoop deletes what the retention lets go, every PruneEvery (the
// first turn at a random point of the first period, so that a fleet
// started at once does not prune at once).
func (e *Engine) pruneLoop() {
	p := e.cfg.Store
	if e.cfg.Retention.Off {
		return
	}
	req := pruneRequest(e.cfg.Retention, e.cfg.PruneBatch)
	if len(req.Rules) == 0 && req.Workers == 0 {
		return
	}
	workers := req.Workers // once a turn is enough for the workers' rows
	wait := time.Duration(rand.Int64N(int64(e.cfg.PruneEvery)) + 1)
	for {
		t := e.cfg.Clock.NewTimer(wait)
		select {
		case <-e.runCtx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		wait = e.cfg.PruneEvery
		req.Workers = workers
		var sum store.PruneResult
		for range maxPruneRounds {
			ctx, cancel := e.storeCtx(e.runCtx)
			r, err := p.Prune(ctx, req)
			cancel()
			if err != nil {
				if e.runCtx.Err() == nil {
					e.cfg.Logger.Warn("pruning failed; trying again at the next turn", "err", err)
				}
				break
			}
			req.Workers = 0
			sum.Tasks, sum.Attempts, sum.Runs, sum.Workers = sum.Tasks+r.Tasks, sum.Attempts+r.Attempts, sum.Runs+r.Runs, sum.Workers+r.Workers
			if r.Tasks < req.Limit {
				break
			}
		}
		if sum != (store.PruneResult{}) {
			e.cfg.Logger.Info("pruned what the retention let go", "tasks", sum.Tasks, "attempts", sum.Attempts, "runs", sum.Runs, "workers", sum.Workers)
		}
	}
}

// pruneRequest is the round of at most limit tasks that p asks for.
func pruneRequest(p retention.Policy, limit int) store.PruneRequest {
	return store.PruneRequest{Rules: p.Rules(), Limit: limit, Workers: max(p.Workers, 0)}
}
