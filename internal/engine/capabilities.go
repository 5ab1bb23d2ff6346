package engine

import "github.com/grit-run/grit/store"

// logMissingOptional says, in one line, which optional capabilities the
// store lacks and what the worker does without them. (The required ones
// are part of store.Store.)
func (e *Engine) logMissingOptional() { store.LogMissing(e.cfg.Logger, e.cfg.Store) }
