package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
)

// TestLogFlagsRefuseBadValues: a format or level grit does not know is a
// usage error naming the flag and what it takes, whether it came from the
// flag or the environment, before the command does anything.
func TestLogFlagsRefuseBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		env  map[string]string
		says string
	}{
		{[]string{"--log-format", "xml", "config"}, nil, `--log-format "xml": want text or json`},
		{[]string{"--log-level", "loud", "config"}, nil, `--log-level "loud": want one of debug, info, warn, error`},
		{[]string{"config"}, map[string]string{"GRIT_LOG_LEVEL": "trace"}, `--log-level "trace": want one of debug, info, warn, error (or set GRIT_LOG_LEVEL)`},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		e := &env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return tt.env[k] }}
		root := newRoot(e)
		root.SetArgs(tt.args)
		err := root.ExecuteContext(t.Context())
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("grit %v (env %v): %v; want a usage error saying %q", tt.args, tt.env, err, tt.says)
		}
		if out.Len() != 0 {
			t.Errorf("grit %v ran anyway: %s", tt.args, out.String())
		}
	}
}

// TestLoggerFormatAndLevel: json writes one object a line; the level
// given replaces the command's default, in both directions.
func TestLoggerFormatAndLevel(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := (&logFlags{format: "json", level: "debug"}).logger(&buf, slog.LevelWarn)
	l.Debug("seen", "n", 1, "took", 1500*time.Millisecond)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["msg"] != "seen" || line["level"] != "DEBUG" || line["took"] != "1.5s" {
		t.Errorf("json at debug: %q (%v)", buf.String(), err)
	}
	buf.Reset()
	l = (&logFlags{format: "text", level: "error"}).logger(&buf, slog.LevelInfo)
	l.Warn("hidden")
	l.Error("shown")
	if got := buf.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "level=ERROR msg=shown") {
		t.Errorf("text at error: %q", got)
	}
	buf.Reset()
	(&logFlags{format: "text"}).logger(&buf, slog.LevelWarn).Info("hidden")
	if buf.Len() != 0 {
		t.Errorf("the command's default level was not kept: %q", buf.String())
	}
}

// TestWorkerLogsJSON: grit worker --log-format json writes its lines to
// stderr as JSON, from the first.
func TestWorkerLogsJSON(t *testing.T) {
	t.Parallel()
	st := migratedStore(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"worker", "--store", st, "--log-format", "json", "--log-level", "debug"}, io.Discard, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	started := false
	for !started && sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		started = line["msg"] == "worker started"
		if started && line["lease"] != store.DefaultLease.String() {
			t.Errorf("the start line's lease is %#v, want %q: a duration as people write it", line["lease"], store.DefaultLease.String())
		}
	}
	if !started {
		t.Fatal("the worker never said it started")
	}
	cancel()
	go io.Copy(io.Discard, pr)
	if code := <-done; code != 0 {
		t.Errorf("worker: exit %d", code)
	}
}
