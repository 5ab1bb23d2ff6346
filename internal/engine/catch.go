package engine

import (
	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// CatchKey is the idempotency key of a catch task (decide.CatchKey).
func CatchKey(id, token int64) string { return decide.CatchKey(id, token) }

// withCatch adds to f, the end of an attempt of t, the catch task of t's
// handler when f fails t (decide.Catch), in the catch handler's group as
// grit.Client.Enqueue would put it. An operator's ActFail is not the
// engine's decision and is not caught.
func (e *Engine) withCatch(t task.Task, f *store.Finish) {
	h, ok := e.handlers[t.Kind]
	if !ok || h.Catch == "" {
		return
	}
	group := ""
	if ch, ok := e.handlers[h.Catch]; ok {
		group = ch.Group
	}
	decide.Catch(t, f, h.Catch, group)
}
