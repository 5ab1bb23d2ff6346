package cli

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestExecThroughTheAPINeedsAllowExec: a process task enqueued through
// grit server fails on a default grit worker, saying to start it with
// --allow-exec; a worker started with --allow-exec=true runs that
// command and no other; one with --allow-exec runs any. A task file's
// process tasks, submitted on this host, run on the default worker.
func TestExecThroughTheAPINeedsAllowExec(t *testing.T) {
	t.Parallel()
	dsn := tempStore(t)
	addr, stop := startServer(t, dsn)
	defer stop()
	enq := func(args string) int64 {
		t.Helper()
		code, out, errOut := grit(t, "enqueue", "--server", addr, "--kind", "exec", "--args", args)
		if code != 0 {
			t.Fatalf("enqueue %s: exit %d: %s", args, code, errOut)
		}
		id, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ended := func(id int64) task.Task {
		t.Helper()
		var got task.Task
		poll.Until(t, 60*time.Second, "the task to end", func() bool {
			got, err = st.GetTask(t.Context(), id)
			return err == nil && got.State.Terminal()
		})
		return got
	}
	work := func(flags ...string) func() {
		cmd, _ := gritProcess(t, t.TempDir(), append([]string{"worker", "--store", dsn}, flags...)...)
		return func() { cmd.Process.Kill(); cmd.Wait() }
	}

	refused := enq(`{"argv":["true"]}`)
	halt := work()
	if got := ended(refused); got.State != task.Failed || !strings.Contains(got.LastError, "exec tasks from the API are not allowed on this worker: start it with --allow-exec") {
		t.Errorf("an API exec task on a default worker: %s, %q; want FAILED naming --allow-exec", got.State, got.LastError)
	}
	file := example("settlement.yaml")
	if code, _, errOut := grit(t, "submit", "--store", dsn, file); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	poll.Until(t, 60*time.Second, "the task file's tasks to end on the default worker", func() bool {
		ts, err := st.ListTasks(t.Context(), task.Filter{Kind: task.KindExec})
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range ts {
			if tk.ID != refused && (!tk.State.Terminal() || tk.State != task.Success) {
				return false
			}
		}
		return len(ts) > 1
	})
	ts, err := st.ListTasks(t.Context(), task.Filter{Kind: task.KindExec})
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	for _, tk := range ts {
		if want := map[bool]string{true: task.OriginAPI, false: task.FileOrigin(host)}[tk.ID == refused]; tk.Origin != want {
			t.Errorf("task %d (%s) has origin %q, want %q", tk.ID, tk.Name, tk.Origin, want)
		}
	}
	halt()

	listed, other := enq(`{"argv":["true"]}`), enq(`{"argv":["false"]}`)
	halt = work("--allow-exec=true")
	if got := ended(listed); got.State != task.Success {
		t.Errorf("the command the worker allows: %s, %q; want SUCCESS", got.State, got.LastError)
	}
	if got := ended(other); got.State != task.Failed || !strings.Contains(got.LastError, `"false" is not one`) {
		t.Errorf("a command the worker does not allow: %s, %q; want FAILED saying so", got.State, got.LastError)
	}
	halt()

	anyCmd := enq(`{"shell":"exit 0"}`)
	halt = work("--allow-exec")
	defer halt()
	if got := ended(anyCmd); got.State != task.Success {
		t.Errorf("a shell on a worker that allows every command: %s, %q; want SUCCESS", got.State, got.LastError)
	}
}

// FuzzParseAllowExec: --allow-exec parses to commands with no empty one,
// none of them with spaces around it, or to an error; never a panic.
func FuzzParseAllowExec(f *testing.F) {
	for _, s := range []string{"", "*", "/usr/bin/convert,backup.sh", ",", " a , b ", "a,,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := parseAllowExec(v)
		if err != nil {
			return
		}
		for _, c := range got {
			if c == "" || strings.TrimSpace(c) != c {
				t.Fatalf("parseAllowExec(%q) = %q: an empty or padded command", v, got)
			}
		}
		if v == "" && got != nil {
			t.Fatalf("parseAllowExec(\"\") = %q, want none", got)
		}
	})
}
