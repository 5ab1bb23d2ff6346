package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnqueueBoundsCLI: grit enqueue refuses a timeout past 30 days and a
// --run-at more than 10 years away, saying the range, before it calls
// the server (exit 2).
func TestEnqueueBoundsCLI(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "87600h"}, "want 0 (none) to 720h (30 days)"},
		{[]string{"--timeout", "-5s"}, "is negative"},
		{[]string{"--run-at", "9999-01-01T00:00:00Z"}, "more than 10 years from now: want a time from"},
		{[]string{"--run-at", "0001-01-01T00:00:00Z"}, "more than 10 years from now"},
	} {
		args := append([]string{"enqueue", "--server", "127.0.0.1:1", "--kind", "k"}, c.args...)
		if code, _, errOut := grit(t, args...); code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("grit %v: exit %d: %s; want %d saying %q", args, code, errOut, exitUsage, c.want)
		}
	}
}

// TestTokensFileOthersCanRead: grit server and grit dashboard refuse a
// tokens file its group or others can read, saying chmod 600 FILE; a
// private one is taken.
func TestTokensFileOthersCanRead(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("0123456789abcdef0123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{
		{"server", "--store", tempStore(t), "--listen", "127.0.0.1:0", "--tokens-file", path},
		{"dashboard", "--store", tempStore(t), "--http", "127.0.0.1:0", "--tokens-file", path},
	} {
		if code, _, errOut := grit(t, cmd...); code != exitUsage || !strings.Contains(errOut, "chmod 600 "+path) {
			t.Errorf("grit %s with a tokens file of mode 0644: exit %d: %s; want %d saying chmod 600 %s", cmd[0], code, errOut, exitUsage, path)
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, out := gritProcess(t, t.TempDir(), "server", "--store", tempStore(t), "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--tokens-file", path)
	waitServing(t, out)
	cmd.Process.Kill()
}
