package engine

import (
	"context"
	"testing"

	"github.com/grit-run/grit/task"
)

// TestChildHasNoStore: the engine of an isolated handler's child has no
// store, and refuses one; handlers register on it as on any engine.
func TestChildHasNoStore(t *testing.T) {
	t.Setenv(ChildEnv, "3") // not taken before Start, which this test does not call
	e, err := NewChild(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Store() != nil {
		t.Errorf("a child's engine has a store, %T", e.Store())
	}
	if err := e.Register(Handler{Kind: "k", Isolate: true, Fn: func(context.Context, *task.Task) error { return nil }}); err != nil {
		t.Errorf("Register in a child: %v", err)
	}
	if e.children != nil {
		t.Error("a child's isolated handler would start children of its own")
	}
	if _, err := NewChild(Config{Store: newSQLite(t)}); err == nil {
		t.Error("NewChild took a store")
	}
}
