package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// TestWaitOnAPrunedRun: grit wait on a run the retention pruned says it
// finished and was pruned; on an id never handed out, that no run has it.
func TestWaitOnAPrunedRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := "sqlite:" + filepath.Join(dir, "grit.db")
	file := filepath.Join(dir, "r.yaml")
	if err := os.WriteFile(file, []byte("name: r\ntasks:\n  a:\n    run: \"true\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := grit(t, "run", "--store", st, file); code != 0 {
		t.Fatalf("grit run: %d\n%s\n%s", code, out, errOut)
	}
	// The pruning store's clock is a minute ahead: the task finished more
	// than the rule's millisecond before it.
	s, err := sqlite.OpenConfig(t.Context(), sqlite.Config{Path: filepath.Join(dir, "grit.db"), Now: func() time.Time { return time.Now().Add(time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Prune(context.Background(), store.PruneRequest{Limit: 10, Rules: []retention.Rule{{State: task.Success, Keep: time.Millisecond}}})
	if err != nil || r.Tasks != 1 || r.Runs != 1 {
		t.Fatalf("prune: %+v, %v; want the run and its task gone", r, err)
	}
	code, _, errOut := grit(t, "wait", "--store", st, "1")
	if code != exitUsage || !strings.Contains(errOut, "run 1 finished and was pruned") {
		t.Errorf("grit wait on the pruned run: %d %q", code, errOut)
	}
	code, _, errOut = grit(t, "wait", "--store", st, "2")
	if code != exitUsage || !strings.Contains(errOut, "no run has id 2") {
		t.Errorf("grit wait on a run never made: %d %q", code, errOut)
	}
}
