package taskfile_test

import (
	"testing"

	"github.com/grit-run/grit/task"
	"github.com/grit-run/grit/taskfile"
)

// TestQuarantineSetting: quarantine reaches the task's Exec, from the
// task or from the defaults, the task's winning whole.
func TestQuarantineSetting(t *testing.T) {
	t.Parallel()
	f, err := taskfile.Parse("q.yaml", []byte(`name: q
defaults:
  quarantine: {kind: row-fix, max: 10}
tasks:
  a: {run: x}
  b:
    run: y
    quarantine:
      max_share: 0.05
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*task.ExecQuarantine{}
	for _, tk := range f.Tasks {
		got[tk.Name] = tk.Exec.Quarantine
	}
	if a := got["a"]; a == nil || *a != (task.ExecQuarantine{Kind: "row-fix", Max: 10}) {
		t.Errorf("a's quarantine %+v, want the defaults'", a)
	}
	if b := got["b"]; b == nil || *b != (task.ExecQuarantine{MaxShare: 0.05}) {
		t.Errorf("b's quarantine %+v, want its own, whole", b)
	}
}
