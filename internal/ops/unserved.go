package ops

import (
	"context"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// UnservedAfter is how long due work waits, with no live worker serving
// its kind, before grit status, the dashboard and the metrics flag it;
// a worker is live while it is active and was seen within it.
const UnservedAfter = time.Minute

// unservedLook bounds the due tasks Unserved looks at: those due the
// longest, where work nobody serves piles up.
const unservedLook = 1000

// UnservedKind is a kind of due work that no live worker serves.
type UnservedKind struct {
	Kind string `json:"kind"`
	// Tasks counts its tasks among the unservedLook due the longest: at
	// least this many wait.
	Tasks int `json:"tasks"`
	// Since is when the one due the longest came due.
	Since time.Time `json:"since"`
}

// Unserved returns the kinds of READY and RETRYING tasks due for
// UnservedAfter or more that no live worker has a handler for, and are
// not paused: they wait for a worker that does not exist. It answers
// nothing when the store cannot tell (no store.Backlog), or when a live
// worker did not say which kinds it serves (one of a grit too old to
// record them).
func Unserved(ctx context.Context, st store.Store, now time.Time) ([]UnservedKind, error) {
	b, ok := st.(store.Backlog)
	if !ok {
		return nil, nil
	}
	ws, err := st.Workers(ctx)
	if err != nil {
		return nil, err
	}
	served, known := Served(ws, now, UnservedAfter)
	if !known {
		return nil, nil
	}
	if p, ok := st.(store.Pauser); ok {
		ps, err := p.Pauses(ctx)
		if err != nil {
			return nil, err
		}
		for _, x := range ps {
			if x.Scope == store.ScopeKind {
				served[x.Name] = true // paused, not unserved
			}
		}
	}
	due, err := b.DueKinds(ctx, now.Add(-UnservedAfter), unservedLook)
	if err != nil {
		return nil, err
	}
	var out []UnservedKind
	for _, d := range due {
		if !served[d.Kind] {
			out = append(out, UnservedKind{Kind: d.Kind, Tasks: d.Tasks, Since: d.Oldest})
		}
	}
	return out, nil
}

// Served returns the kinds the workers alive at now (heard from within
// lease) serve, and whether that is known: a live worker that did not
// say which kinds it serves (one of a grit too old to record them)
// makes it unknown.
func Served(ws []task.Worker, now time.Time, lease time.Duration) (map[string]bool, bool) {
	served := map[string]bool{}
	for _, w := range ws {
		if !w.Alive(now, lease) {
			continue
		}
		if len(w.Kinds) == 0 {
			return nil, false
		}
		for _, k := range w.Kinds {
			served[k] = true
		}
	}
	return served, true
}
