// Package quarantine replays and drops quarantined items: one rule for
// the CLI, the API server, the dashboard and the root's Client.
package quarantine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Batch bounds the items one store call replays or drops.
const Batch = 500

// Key is the idempotency key of item id's replay: replaying an item
// again, after a replay that enqueued its task and failed before
// dropping it, answers the same task.
func Key(id int64) string { return fmt.Sprintf("grit-quarantined-%d", id) }

// Result is what a replay or a drop did.
type Result struct {
	// Replayed are the tasks the items became, Dropped how many items
	// were dropped (replayed ones among them: an item replayed is no
	// longer quarantined).
	Replayed []task.Enqueued
	Dropped  int
	// Refused are the items that could not be replayed, each with why.
	Refused []error
}

// Select resolves what an operator names, ids or a fingerprint (one of
// them), to the items, in pages of Batch.
func Select(ctx context.Context, st store.Quarantiner, ids []int64, fingerprint string, each func([]task.Quarantined) error) error {
	if err := Check(ids, fingerprint); err != nil {
		return err
	}
	for start := 0; start < len(ids); start += Batch {
		page := ids[start:min(start+Batch, len(ids))]
		items, err := st.ListQuarantined(ctx, task.QuarantineFilter{IDs: page})
		if err != nil {
			return err
		}
		if err := each(items); err != nil {
			return err
		}
	}
	if fingerprint == "" {
		return nil
	}
	var after int64
	for {
		items, err := st.ListQuarantined(ctx, task.QuarantineFilter{Fingerprint: fingerprint, AfterID: after, Limit: Batch})
		if err != nil || len(items) == 0 {
			return err
		}
		if err := each(items); err != nil {
			return err
		}
		after = items[len(items)-1].ID
	}
}

// Check says what is wrong, if anything, with naming items by ids and
// by fingerprint: both, neither, or an id that is no id.
func Check(ids []int64, fingerprint string) error {
	switch {
	case len(ids) > 0 && fingerprint != "":
		return fmt.Errorf("%w: name items by id or by fingerprint, not both", task.ErrInvalid)
	case len(ids) == 0 && fingerprint == "":
		return fmt.Errorf("%w: name the items: their ids, or a fingerprint (grit dlq list shows both)", task.ErrInvalid)
	}
	for _, id := range ids {
		if id <= 0 {
			return fmt.Errorf("%w: item id %d: ids start at 1 (grit dlq list shows them)", task.ErrInvalid, id)
		}
	}
	return nil
}

// Unknown are those of ids that name no quarantined item: never set
// aside, or replayed or dropped since. A caller that must not act on a
// mistyped id asks before it acts.
func Unknown(ctx context.Context, st store.Quarantiner, ids []int64) ([]int64, error) {
	there := make(map[int64]bool, len(ids))
	for start := 0; start < len(ids); start += Batch {
		items, err := st.ListQuarantined(ctx, task.QuarantineFilter{IDs: ids[start:min(start+Batch, len(ids))]})
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			there[it.ID] = true
		}
	}
	var out []int64
	for _, id := range ids {
		if !there[id] && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// Replay runs each item as a new task of its ReplayKind, in its queue,
// with the item as its args, and drops the items it enqueued. An item
// whose handler named no kind is refused, and stays.
func Replay(ctx context.Context, st store.Store, ids []int64, fingerprint string) (Result, error) {
	var r Result
	err := Select(ctx, st, ids, fingerprint, func(items []task.Quarantined) error {
		var nts []task.NewTask
		var done []int64
		for _, it := range items {
			if it.ReplayKind == "" {
				r.Refused = append(r.Refused, fmt.Errorf("item %d (of task %d, %s): its handler names no kind to replay it as (HandlerConfig.Quarantine.Kind, or quarantine.kind in a task file): drop it, or name one and quarantine it again", it.ID, it.TaskID, it.Kind))
				continue
			}
			nts = append(nts, task.NewTask{Kind: it.ReplayKind, Queue: it.Queue, Args: it.Item, IdempotencyKey: Key(it.ID)})
			done = append(done, it.ID)
		}
		if len(nts) == 0 {
			return nil
		}
		es, err := st.Enqueue(ctx, nts)
		if err != nil {
			return err
		}
		r.Replayed = append(r.Replayed, es...)
		n, err := st.DropQuarantined(ctx, done)
		r.Dropped += n
		return err
	})
	return r, err
}

// Drop deletes the items.
func Drop(ctx context.Context, st store.Quarantiner, ids []int64, fingerprint string) (Result, error) {
	var r Result
	err := Select(ctx, st, ids, fingerprint, func(items []task.Quarantined) error {
		list := make([]int64, len(items))
		for i, it := range items {
			list[i] = it.ID
		}
		n, err := st.DropQuarantined(ctx, list)
		r.Dropped += n
		return err
	})
	return r, err
}

// Err is r's refusals as one error, nil when none.
func (r Result) Err() error { return errors.Join(r.Refused...) }
