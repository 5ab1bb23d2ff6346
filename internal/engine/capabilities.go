package engine

import (
	"fmt"
	"strings"

	"github.com/grit-run/grit/store"
)

// logMissingOptional says, in one line, which optional capabilities the
// store lacks and what the worker does without them. (The required ones
// are part of store.Store.)
func (e *Engine) logMissingOptional() {
	if missing := store.MissingOptional(e.cfg.Store); len(missing) > 0 {
		e.cfg.Logger.Info("the store lacks optional capabilities", "store", fmt.Sprintf("%T", e.cfg.Store), "missing", strings.Join(missing, "; "))
	}
}
