package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/grit-run/grit/task"
)

// Quarantiner is part of Store: the items handlers set aside (one bad row
// of many) while their tasks went on, kept until an operator replays or
// drops them.
type Quarantiner interface {
	// Quarantine records items set aside by the attempt of task taskID
	// that holds it under token (ReplayKind, Item, Error and Fingerprint
	// from each; the rest is the task's): task.ErrLeaseLost when the task
	// is not RUNNING under token, task.ErrInvalid for an item that is not
	// JSON or exceeds task.MaxQuarantinedItem. An item the task set aside
	// before (the same JSON, by any attempt) is not recorded again:
	// quarantining is idempotent, so a retried attempt does not count its
	// rows twice. It answers how many items the task has set aside in
	// all; with no items, it only answers that (under the lease).
	Quarantine(ctx context.Context, taskID, token int64, items []task.Quarantined) (total int, err error)
	// ListQuarantined lists the items f selects, oldest first.
	ListQuarantined(ctx context.Context, f task.QuarantineFilter) ([]task.Quarantined, error)
	// QuarantineGroups groups the quarantined items by fingerprint, the
	// largest group first (then the one set aside last).
	QuarantineGroups(ctx context.Context) ([]QuarantineGroup, error)
	// DropQuarantined deletes the items ids names and answers how many
	// it deleted (an id not there is no error: replaying or dropping is
	// idempotent).
	DropQuarantined(ctx context.Context, ids []int64) (int, error)
}

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

// CheckQuarantined checks items for Quarantine, and returns the digest
// of each item's JSON, which keeps a task from setting one item aside
// twice: every driver keeps the digests, unique by task.
func CheckQuarantined(items []task.Quarantined) ([]string, error) {
	digests := make([]string, len(items))
	for i, it := range items {
		switch {
		case !json.Valid(it.Item):
			return nil, invalid("quarantined item %d: not JSON", i)
		case len(it.Item) > task.MaxQuarantinedItem:
			return nil, invalid("quarantined item %d: %d bytes of JSON: the most an item keeps is %d; set aside a reference to it (a key, a line number) instead", i, len(it.Item), task.MaxQuarantinedItem)
		}
		sum := sha256.Sum256(it.Item)
		digests[i] = hex.EncodeToString(sum[:16])
	}
	return digests, nil
}
