package engine

import (
	"strings"
	"testing"

	"github.com/grit-run/grit/task"
)

// TestExecFromElsewhereNeedsAllowExec: a process task enqueued through the
// API, or from another host's task file, fails permanently on a worker
// that does not allow it, saying which setting would; a worker that allows
// every command, or the task's own, runs it; one from code with the store
// or from this host's task file runs on any worker.
func TestExecFromElsewhereNeedsAllowExec(t *testing.T) {
	t.Parallel()
	echo := execArgs(t, task.Exec{Argv: []string{"true"}})
	shell := execArgs(t, task.Exec{Shell: "true"})
	for _, c := range []struct {
		name   string
		allow  []string
		origin string
		args   []byte
		want   task.State
		says   string
	}{
		{"api, default worker", nil, task.OriginAPI, echo, task.Failed, "exec tasks from the API are not allowed on this worker: start it with --allow-exec"},
		{"another host's file, default worker", nil, task.FileOrigin("elsewhere"), echo, task.Failed, "not a task file of this host"},
		{"api, every command allowed", []string{task.AllowAllExec}, task.OriginAPI, shell, task.Success, ""},
		{"api, its command allowed", []string{"/bin/false", "true"}, task.OriginAPI, echo, task.Success, ""},
		{"api, another command allowed", []string{"/bin/false"}, task.OriginAPI, echo, task.Failed, `(--allow-exec=/bin/false): "true" is not one`},
		{"api, a shell with commands allowed", []string{"true"}, task.OriginAPI, shell, task.Failed, "with argv and no shell"},
		{"this host's file, default worker", nil, task.FileOrigin(thisHost), echo, task.Success, ""},
		{"code with the store, default worker", nil, "", shell, task.Success, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := newSQLite(t)
			cfg := testConfig(st)
			cfg.AllowExec = c.allow
			start(t, cfg)
			id := enqueue(t, st, task.NewTask{Kind: task.KindExec, Args: c.args, Origin: c.origin}).ID
			got := waitState(t, st, id, task.Success, task.Failed, task.DeadLetter)
			if got.State != c.want || !strings.Contains(got.LastError, c.says) {
				t.Errorf("task is %s with error %q, want %s saying %q", got.State, got.LastError, c.want, c.says)
			}
		})
	}
}
