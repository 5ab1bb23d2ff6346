package cli

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/grit-run/grit/task"
)

// internalWords are words of grit's layers that no message to a user has.
var internalWords = []string{"task: invalid", "task: not found", "task 0:", "rpc error", "code =", "desc =", "AlreadyExists", "Unavailable"}

// wantUserError checks that a failed command exited code, said each of
// want on standard error, and none of grit's internal words.
func wantUserError(t *testing.T, what string, code int, errOut string, wantCode int, want ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: exit %d, want %d; stderr %q", what, code, wantCode, errOut)
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			t.Errorf("%s: stderr %q, want it to say %q", what, errOut, w)
		}
	}
	for _, w := range internalWords {
		if strings.Contains(errOut, w) {
			t.Errorf("%s: stderr %q has grit's internal wording %q", what, errOut, w)
		}
	}
}

// TestErrorsSayWhatToDo: through the binary, a mistyped pause scope, a
// schedule not there and an idempotency key that names other work are
// told in the user's words, with what to do.
func TestErrorsSayWhatToDo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := migratedStore(t)
	code, _, errOut := gritExec(t, dir, "pause", "queues", "mail", "--store", st)
	wantUserError(t, "pause queues mail", code, errOut, exitUsage, `not "queues"`, "did you mean queue?", "grit pause queue mail")
	code, _, errOut = gritExec(t, dir, "resume", "knid", "resize", "--store", st)
	wantUserError(t, "resume knid resize", code, errOut, exitUsage, "did you mean kind?")
	for _, action := range [][]string{{"pause"}, {"trigger"}, {"delete"}, {"backfill", "--from", "1h", "--to", "0s"}} {
		args := append([]string{"schedules", action[0], "nightly", "--store", st}, action[1:]...)
		code, _, errOut := gritExec(t, dir, args...)
		wantUserError(t, "schedules "+action[0]+" of none", code, errOut, exitUsage, `no schedule named "nightly"`, "grit schedules lists")
	}
	addr, stop := startServer(t, tempStore(t))
	defer stop()
	if code, out, errOut := gritExec(t, dir, "enqueue", "--server", addr, "--kind", "a", "--key", "k"); code != 0 || strings.TrimSpace(out) != "1" {
		t.Fatalf("enqueue: exit %d: %s %s", code, out, errOut)
	}
	code, _, errOut = gritExec(t, dir, "enqueue", "--server", addr, "--kind", "b", "--key", "k")
	wantUserError(t, "enqueue of other work under a key taken", code, errOut, exitUsage,
		`the key "k" already names task 1, of kind a`, "another --key", "--return-existing")
	code, _, errOut = gritExec(t, dir, "get", "99", "--server", addr)
	wantUserError(t, "get of a task not there", code, errOut, exitUsage, "no task has id 99")
}

// TestTLSMismatchIsNamed: a client dialing with TLS a server that speaks
// none, and one dialing without TLS a server that speaks it, are told so
// and how to fix it, through the binary.
func TestTLSMismatchIsNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, stopPlain := startServer(t, tempStore(t))
	defer stopPlain()
	cert, key := selfSigned(t, dir)
	cmd, srvOut := gritProcess(t, dir, "server", "--store", tempStore(t), "--listen", "127.0.0.1:0", "--http", "off", "--tls-cert", cert, "--tls-key", key)
	secure := waitServing(t, srvOut)
	defer cmd.Process.Signal(syscall.SIGTERM)
	fast := []string{"GRIT_GRPC_TIMEOUT=5s", "GRIT_SEND_RETRIES=0"}

	code, _, errOut := gritExecEnv(t, dir, append(fast, "GRIT_SERVER_TLS=true"), "get", "1", "--server", plain)
	wantUserError(t, "a TLS client to a plain server", code, errOut, exitUsage,
		fmt.Sprintf("the server at %s does not speak TLS", plain), "unset them")
	code, _, errOut = gritExecEnv(t, dir, fast, "enqueue", "--kind", "k", "--server", secure)
	wantUserError(t, "a plain client to a TLS server", code, errOut, exitUsage,
		fmt.Sprintf("the server at %s speaks TLS", secure), "GRIT_SERVER_TLS=true")
	if code, out, errOut := gritExecEnv(t, dir, append(fast, "GRIT_SERVER_CA="+cert), "enqueue", "--kind", "k", "--server", secure); code != 0 || strings.TrimSpace(out) == "" {
		t.Errorf("a TLS client to a TLS server: exit %d: %s %s", code, out, errOut)
	}
}

// TestUserText: the sentinels' wording is left out of what the user reads,
// wherever it is in the chain.
func TestUserText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("pause: scope %q: want queue: %w", "x", task.ErrInvalid), `pause: scope "x": want queue`},
		{fmt.Errorf("fsm show: instance not found: %w (grit fsm list shows them)", task.ErrNotFound), "fsm show: instance not found (grit fsm list shows them)"},
		{fmt.Errorf("dlq replay: %w", &task.StateError{State: task.Success}), "dlq replay: task is SUCCESS"},
		{errors.New("task: invalid, said by no sentinel"), "task: invalid, said by no sentinel"},
	} {
		if got := userText(tt.err); got != tt.want {
			t.Errorf("userText(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
