package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/grit-run/grit/internal/testcert"
)

// startServer starts grit server as a child process on a free loopback
// port and returns its address.
func startServer(t *testing.T, st string) (string, func() error) {
	t.Helper()
	cmd, out := gritProcess(t, t.TempDir(), "server", "--store", st, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	return waitServing(t, out), func() error { cmd.Process.Signal(syscall.SIGTERM); return cmd.Wait() }
}

// TestServerEnqueueGetCancel: grit enqueue, get and cancel through a
// real grit server process.
func TestServerEnqueueGetCancel(t *testing.T) {
	t.Parallel()
	addr, stop := startServer(t, tempStore(t))
	enq := func(args ...string) (int, string, string) {
		return grit(t, append([]string{"enqueue", "--server", addr, "--kind", "email.send"}, args...)...)
	}
	code, first, errOut := enq("--args", `{"to": "a@example.com"}`, "--key", "welcome-1")
	if code != 0 || strings.TrimSpace(first) == "" {
		t.Fatalf("enqueue: exit %d: %s %s", code, first, errOut)
	}
	if code, again, errOut := enq("--args", `{ "to" : "a@example.com" }`, "--key", "welcome-1"); code != 0 || again != first || !strings.Contains(errOut, "existed already") {
		t.Errorf("the same work with the key again: exit %d, id %q, want %q; stderr %q, want it to say the task existed", code, again, first, errOut)
	}
	var existed struct {
		ID      int64 `json:"id"`
		Existed *bool `json:"existed"`
	}
	if code, out, _ := enq("--args", `{"to": "a@example.com"}`, "--key", "welcome-1", "--json"); code != 0 ||
		json.Unmarshal([]byte(out), &existed) != nil || existed.Existed == nil || !*existed.Existed || fmt.Sprint(existed.ID) != strings.TrimSpace(first) {
		t.Errorf("the same key again --json: exit %d: %s; want task %s with \"existed\": true", code, out, strings.TrimSpace(first))
	}
	code, _, errOut = enq("--args", `{"to": "x@example.com"}`, "--key", "welcome-1")
	if code != 2 || !strings.Contains(errOut, "already names task") || !strings.Contains(errOut, "welcome-1") || !strings.Contains(errOut, "task "+strings.TrimSpace(first)) {
		t.Errorf("other args under a key taken: exit %d: %s; want 2 naming the key and task %s that holds it", code, errOut, strings.TrimSpace(first))
	}
	if code, out, _ := enq("--args", `{"to": "x@example.com"}`, "--key", "welcome-1", "--return-existing"); code != 0 || out != first {
		t.Errorf("other args under a key taken, --return-existing: exit %d, id %q, want %q", code, out, first)
	}
	file := filepath.Join(t.TempDir(), "args.json")
	os.WriteFile(file, []byte(`{"to": "b@example.com"}`), 0o644)
	code, second, _ := enq("--args", "@"+file, "--json")
	var got struct {
		ID    int64           `json:"id"`
		Args  json.RawMessage `json:"args"`
		State string          `json:"state"`
	}
	if err := json.Unmarshal([]byte(second), &got); code != 0 || err != nil || got.ID == 0 || string(got.Args) != `{"to":"b@example.com"}` || got.State != "READY" {
		t.Errorf("enqueue --args @FILE --json: exit %d, %v: %s", code, err, second)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--args", `{"to":`}, "not JSON"},
		{[]string{"--args", "@" + filepath.Join(t.TempDir(), "none.json")}, "no such file"},
		{[]string{"--queue", "bad queue"}, "queue"},
	} {
		if code, _, errOut := enq(bad.args...); code != 2 || !strings.Contains(errOut, bad.want) {
			t.Errorf("enqueue %v: exit %d: %s, want 2 saying %q", bad.args, code, errOut, bad.want)
		}
	}
	id := strings.TrimSpace(first)
	if code, out, _ := grit(t, "get", id, "--server", addr); code != 0 || !strings.Contains(out, "kind") || !strings.Contains(out, "email.send") {
		t.Errorf("get: exit %d: %s", code, out)
	}
	if code, out, _ := grit(t, "get", id, "--json", "--server", addr); code != 0 || !strings.Contains(out, `"kind":"email.send"`) || !strings.Contains(out, `"id":`+id+`,`) {
		t.Errorf("get --json: exit %d: %s", code, out)
	}
	for range 2 { // a repeated cancel is no error
		if code, out, errOut := grit(t, "cancel", id, "--server", addr); code != 0 || out != "task "+id+": CANCELLED\n" {
			t.Errorf("cancel: exit %d: %s %s", code, out, errOut)
		}
	}
	if code, _, errOut := grit(t, "get", "999999", "--server", addr); code != 2 || !strings.Contains(errOut, "no task has id 999999") {
		t.Errorf("get a task that is not there: exit %d: %s", code, errOut)
	}
	if err := stop(); err != nil {
		t.Errorf("grit server after SIGTERM: %v", err)
	}
}

// TestServerTokens: a server with tokens refuses a call without one or
// with a wrong one, and takes the right one; without tokens it refuses to
// serve beyond loopback.
func TestServerTokens(t *testing.T) {
	const token = "0123456789abcdef0123"
	t.Setenv("GRIT_TOKENS", token)
	addr, stop := startServer(t, tempStore(t))
	defer stop()
	if code, _, errOut := grit(t, "enqueue", "--server", addr, "--kind", "k"); code != 2 || !strings.Contains(errOut, "needs a token: set GRIT_TOKEN") {
		t.Errorf("no token: exit %d: %s", code, errOut)
	}
	t.Setenv("GRIT_TOKEN", "wrong-token-wrong-token")
	if code, _, errOut := grit(t, "enqueue", "--server", addr, "--kind", "k"); code != 2 || !strings.Contains(errOut, "does not accept the token in GRIT_TOKEN") {
		t.Errorf("a wrong token: exit %d: %s", code, errOut)
	}
	t.Setenv("GRIT_TOKEN", token)
	if code, out, errOut := grit(t, "enqueue", "--server", addr, "--kind", "k"); code != 0 || strings.TrimSpace(out) == "" {
		t.Errorf("the right token: exit %d: %s %s", code, out, errOut)
	}
	t.Setenv("GRIT_TOKENS", "")
	if code, _, errOut := grit(t, "server", "--store", tempStore(t), "--listen", "0.0.0.0:0"); code != 2 || !strings.Contains(errOut, "GRIT_TOKENS") {
		t.Errorf("no tokens on 0.0.0.0: exit %d: %s", code, errOut)
	}
}

func TestReadArgs(t *testing.T) {
	t.Parallel()
	e := &env{stdin: strings.NewReader(`{"from": "stdin"}`)}
	if raw, err := e.readArgs("@-"); err != nil || string(raw) != `{"from": "stdin"}` {
		t.Errorf("@-: %s, %v", raw, err)
	}
	if raw, err := e.readArgs(""); err != nil || raw != nil {
		t.Errorf("none: %s, %v", raw, err)
	}
	if _, err := e.readArgs("{nope}"); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("bad JSON: %v", err)
	}
}

// TestServerTLS: grit server with a certificate speaks TLS; grit enqueue
// reaches it with GRIT_SERVER_CA, and not in plain text.
func TestServerTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	cmd, srvOut := gritProcess(t, dir, "server", "--store", tempStore(t), "--listen", "127.0.0.1:0", "--http", "off", "--tls-cert", cert, "--tls-key", key)
	addr := waitServing(t, srvOut)
	defer cmd.Process.Signal(syscall.SIGTERM)
	t.Setenv("GRIT_GRPC_TIMEOUT", "2s")
	t.Setenv("GRIT_SEND_RETRIES", "0")
	if code, _, errOut := grit(t, "enqueue", "--server", addr, "--kind", "k"); code == 0 {
		t.Errorf("plain text to a TLS server: exit 0 (%s), want a failure", errOut)
	}
	t.Setenv("GRIT_SERVER_CA", cert)
	if code, out, errOut := grit(t, "enqueue", "--server", addr, "--kind", "k"); code != 0 || strings.TrimSpace(out) == "" {
		t.Errorf("with GRIT_SERVER_CA: exit %d: %s %s", code, out, errOut)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	cert, key, _ = testcert.Write(t, dir)
	return cert, key
}
