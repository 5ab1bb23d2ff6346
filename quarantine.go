package grit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/internal/quarantine"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// ErrTooManyQuarantined is matched by the error of a task that set aside
// more items than its handler tolerates (QuarantinePolicy): it fails,
// permanently, and its items stay quarantined.
var ErrTooManyQuarantined = engine.ErrTooManyQuarantined

// QuarantinePolicy is what a handler does with the items it sets aside
// (HandlerConfig.Quarantine).
type QuarantinePolicy struct {
	// Kind is the kind a replayed item runs as, with the item as its
	// args: a handler of one item. "": the items can only be dropped.
	Kind string
	// Max is how many items a task may set aside, in all its attempts,
	// and still succeed; MaxShare, the share of the items its attempt
	// reported it saw (Saw). Past either, the task fails, permanently,
	// with an error matching ErrTooManyQuarantined; Quarantine answers it
	// as soon as Max is passed. Zero: no bound.
	Max      int
	MaxShare float64
}

// Quarantine sets item aside, with err, inside a handler, and lets the
// task go on: one bad row need not fail the task that carries ten
// thousand good ones. The item is recorded durably with err's
// fingerprint (its type and its message, numbers and ids masked), and
// waits beside the dead letters, grouped by fingerprint (grit dlq list,
// the dashboard, the API), for an operator to replay it, as a task of
// the handler's QuarantinePolicy.Kind with the item as its args, or to
// drop it. A task sets an item (the same JSON) aside once, however many
// of its attempts do. Each attempt that sets items aside raises one
// alert (AlertQuarantined), however many it set aside.
//
// The error is nil, or ErrTooManyQuarantined (permanent: return it) once
// the task is past its handler's QuarantinePolicy.Max, or the store's
// (the lease lost, an item that is not JSON or over 256 KiB: set a
// reference to a large item aside).
func Quarantine(ctx context.Context, item any, err error) error {
	if err == nil {
		return errors.New("grit: quarantine: an item with no error: give the error that made it bad")
	}
	b, merr := json.Marshal(item)
	if merr != nil {
		return retry.Permanent(fmt.Errorf("grit: quarantine: the item does not encode as JSON: %w", merr))
	}
	return engine.Quarantine(ctx, []task.Quarantined{{Item: b, Error: err.Error(), Fingerprint: retry.Fingerprint(err)}})
}

// Saw reports, inside a handler, that its attempt saw n more items: the
// measure of QuarantinePolicy.MaxShare.
func Saw(ctx context.Context, n int) error { return engine.Saw(ctx, n) }

// QuarantineGroup is the quarantined items that share a fingerprint.
type QuarantineGroup struct {
	Fingerprint string
	Count       int
	// FirstAt and LastAt are when the group's first and last items were
	// set aside.
	FirstAt, LastAt time.Time
	// Sample is the error of the group's newest item, SampleItem its id,
	// and Kinds the kinds of the tasks that set them aside, sorted.
	Sample     string
	SampleItem int64
	Kinds      []string
}

// Quarantined lists the quarantined items f selects, oldest first.
func (c *Client) Quarantined(ctx context.Context, f task.QuarantineFilter) ([]task.Quarantined, error) {
	st, err := c.driver()
	if err != nil {
		return nil, err
	}
	return st.ListQuarantined(ctx, f)
}

// QuarantineGroups groups the quarantined items by fingerprint, the
// largest group first.
func (c *Client) QuarantineGroups(ctx context.Context) ([]QuarantineGroup, error) {
	st, err := c.driver()
	if err != nil {
		return nil, err
	}
	gs, err := st.QuarantineGroups(ctx)
	out := make([]QuarantineGroup, len(gs))
	for i, g := range gs {
		out[i] = QuarantineGroup(g)
	}
	return out, err
}

// ReplayQuarantined runs quarantined items again, each as a new task of
// the kind its handler named (QuarantinePolicy.Kind), in its task's
// queue, with the item as its args; an item replayed is no longer
// quarantined. Name the items by id, or all of a fingerprint's (one of
// the two). An item whose handler named no kind stays, and the error
// says so; a replay is idempotent (an item's task is enqueued once).
func (c *Client) ReplayQuarantined(ctx context.Context, ids []int64, fingerprint string) ([]task.Enqueued, error) {
	st, err := c.driver()
	if err != nil {
		return nil, err
	}
	r, err := quarantine.Replay(ctx, st, ids, fingerprint)
	if len(r.Replayed) > 0 {
		c.metrics.Enqueued(r.Replayed)
		c.engine.Wake()
	}
	if err = errors.Join(err, r.Err()); err != nil {
		return r.Replayed, fmt.Errorf("grit: replay quarantined items: %w", err)
	}
	return r.Replayed, nil
}

// DropQuarantined deletes quarantined items, by id or all of a
// fingerprint's (one of the two), and answers how many it deleted.
func (c *Client) DropQuarantined(ctx context.Context, ids []int64, fingerprint string) (int, error) {
	st, err := c.driver()
	if err != nil {
		return 0, err
	}
	r, err := quarantine.Drop(ctx, st, ids, fingerprint)
	if err != nil {
		return r.Dropped, fmt.Errorf("grit: drop quarantined items: %w", err)
	}
	return r.Dropped, nil
}
