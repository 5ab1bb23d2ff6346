package store

import (
	"context"
	"fmt"
	"time"

	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/task"
)

// PruneRequest asks for one bounded round of pruning.
type PruneRequest struct {
	// Rules say which finished tasks go, and when. A state without a rule
	// is kept forever (DEAD_LETTER has none: an operator ends it).
	// (retention.Policy.Rules writes them.)
	Rules []retention.Rule
	// Limit bounds the tasks deleted in the round (at least 1).
	Limit int
	// Workers, when above 0, deletes the rows of workers inactive (or not
	// seen) for that long that hold no task.
	Workers time.Duration
}

// PruneResult counts what a round deleted.
type PruneResult struct {
	Tasks int // event deliveries are tasks, and count here
	// Attempts counts the attempt rows deleted: a plain success's
	// attempt, which the drivers keep on its task row
	// (Finish.PlainSuccess), goes with the task, uncounted.
	Attempts int
	Runs     int
	Workers  int
}

// Pruner is part of Store: it deletes what the retention rules let go, a
// bounded round at a time, so that a store that runs for months stops
// growing.
//
// A round deletes at most Limit finished tasks, oldest finished first,
// with their attempts; a task of a run goes only once its run has ended,
// and the run (with its edges) goes with its last task. Any number of
// claimers may prune at once, without a leader: two rounds never delete
// the same rows (each takes rows the other has not locked, or waits for
// none), and a round never holds a lock a claim waits for beyond its own
// short transaction.
type Pruner interface {
	Prune(ctx context.Context, req PruneRequest) (PruneResult, error)
	// RunPruned tells whether a run that GetRun does not find was once
	// there and has been pruned (its id was handed out), rather than
	// never made.
	RunPruned(ctx context.Context, id int64) (bool, error)
}

// ValidatePrune checks a request before a round.
func ValidatePrune(req PruneRequest) error {
	if req.Limit < 1 {
		return invalid("prune: limit %d: want 1 or more tasks a round", req.Limit)
	}
	for _, r := range req.Rules {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("prune: %w", err)
		}
	}
	if req.Workers < 0 {
		return invalid("prune: workers %v: want a positive duration, or 0 to keep them", req.Workers)
	}
	return nil
}

// PruneKeep is how long rules keep a finished task of state in queue: the
// queue's own rule for the state, else the rule without a queue. ok is
// false when neither is there, and the task is kept forever. Of two rules
// for the same queue and state, the longer keep wins: a repeated rule is
// a mistake, and keeping too long is the one that can be undone.
func PruneKeep(rules []retention.Rule, queue string, state task.State) (keep time.Duration, ok bool) {
	var def time.Duration
	for _, r := range rules {
		switch {
		case r.State != state:
		case r.Queue == queue && queue != "":
			keep = max(keep, r.Keep)
		case r.Queue == "":
			def = max(def, r.Keep)
		}
	}
	if keep > 0 {
		return keep, true
	}
	return def, def > 0
}

// PruneShortest is the shortest keep of state's rules, in any queue, and
// false when state has none: no task of state finished later than now
// minus it is due, which bounds a driver's walk of its index.
func PruneShortest(rules []retention.Rule, state task.State) (time.Duration, bool) {
	var d time.Duration
	for _, r := range rules {
		if r.State == state && (d == 0 || r.Keep < d) {
			d = r.Keep
		}
	}
	return d, d > 0
}
