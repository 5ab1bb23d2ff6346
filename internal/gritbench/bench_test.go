package gritbench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/grit-run/grit/store"
	_ "github.com/grit-run/grit/store/sqlite"
)

// TestRunMeasuresEverything runs the whole benchmark at a small size: every
// figure comes out, and positive. It asserts no speed.
func TestRunMeasuresEverything(t *testing.T) {
	dir := t.TempDir()
	n := 0
	open := func() (store.Store, error) {
		n++
		return store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "b"+string(rune('0'+n))+".db"))
	}
	var steps []string
	r, err := Run(context.Background(), open, Config{Tasks: 300, Batch: 100, Retries: 30, Procs: 5}, func(s string) { steps = append(steps, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 {
		t.Errorf("steps %v", steps)
	}
	if r.EnqueuePerSec <= 0 || r.WorkPerSec <= 0 || r.ExecTaskMS <= 0 || r.BareExecMS <= 0 || r.RetryLateMax < r.RetryLateP50 {
		t.Errorf("result %+v", r)
	}
	if r.RetryLateP50 < -1 {
		t.Errorf("retries started %vms before they were due", r.RetryLateP50)
	}
	t.Logf("%+v", r)
}
