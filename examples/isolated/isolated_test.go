package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExample runs the example as a user would: the hung first attempt
// is killed in its child and the retry succeeds in another; the crash
// fails its own task, and the worker reports both.
func TestExample(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "isolated")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{
		"task 1 (render): SUCCESS after 2 attempts: timed out after 1s",
		"task 2 (crash): FAILED after 1 attempts: isolated handler's process exited with status 3",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the example printed\n%s\nwant a line with %q", stdout.String(), want)
		}
	}
	if !strings.Contains(stderr.String(), "render, attempt 1, in process") || !strings.Contains(stderr.String(), "render, attempt 2, in process") {
		t.Errorf("its children printed\n%s\nwant both render attempts", stderr.String())
	}
}
