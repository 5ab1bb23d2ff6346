package proc

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	for _, code := range []int{0, 1, 75} {
		res := runBounded(t, testCtx(t), Spec{Shell: "exit " + strconv.Itoa(code)})
		if res.ExitCode != code || res.Signal != "" || res.TimedOut || res.Killed {
			t.Errorf("exit %d: got %+v", code, res)
		}
		if res.Pid <= 0 || res.Duration <= 0 {
			t.Errorf("exit %d: Pid %d, Duration %v; want both set", code, res.Pid, res.Duration)
		}
	}
}

func TestRunKilledBySignal(t *testing.T) {
	t.Parallel()
	res := runBounded(t, testCtx(t), Spec{Shell: "kill -USR1 $$"})
	if res.ExitCode != -1 || res.Signal != "SIGUSR1" || res.TimedOut || res.Killed {
		t.Errorf("got %+v, want ExitCode -1, Signal SIGUSR1, not timed out", res)
	}
}

func TestRunOutputTails(t *testing.T) {
	t.Parallel()
	const script = `i=0; while [ $i -lt 100 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done`
	var liveOut, liveErr bytes.Buffer
	res := runBounded(t, testCtx(t), Spec{Shell: script, TailBytes: 20, Stdout: &liveOut, Stderr: &liveErr})
	if got, want := string(res.Stdout), "out 98\nout 99\n"; got != want {
		t.Errorf("Stdout = %q, want %q (20 bytes, cut at a line)", got, want)
	}
	if got, want := string(res.Stderr), "err 98\nerr 99\n"; got != want {
		t.Errorf("Stderr = %q, want %q", got, want)
	}
	if got := strings.Count(liveOut.String(), "\n"); got != 100 || !strings.HasPrefix(liveOut.String(), "out 0\n") {
		t.Errorf("live stdout holds %d lines, starting %.10q; want all 100", got, liveOut.String())
	}
	if got := strings.Count(liveErr.String(), "\n"); got != 100 {
		t.Errorf("live stderr holds %d lines, want 100", got)
	}
	if got := res.LastLine(); got != "err 99" {
		t.Errorf("LastLine() = %q, want %q", got, "err 99")
	}
}

func TestRunOutputDefaultTail(t *testing.T) {
	t.Parallel()
	res := runBounded(t, testCtx(t), Spec{Shell: `head -c 10000 /dev/zero | tr '\0' x; echo; echo short >&2`})
	if len(res.Stdout) != DefaultTailBytes {
		t.Errorf("len(Stdout) = %d, want DefaultTailBytes (%d) of one long line", len(res.Stdout), DefaultTailBytes)
	}
	if got := string(res.Stderr); got != "short\n" {
		t.Errorf("Stderr = %q, want %q", got, "short\n")
	}
}

// TestRunSharedLiveWriter gives one unsynchronized buffer as both live
// copies: Run must not write to it concurrently (the race detector tells).
func TestRunSharedLiveWriter(t *testing.T) {
	t.Parallel()
	var both bytes.Buffer
	const script = `i=0; while [ $i -lt 200 ]; do echo o; echo e >&2; i=$((i+1)); done`
	runBounded(t, testCtx(t), Spec{Shell: script, Stdout: &both, Stderr: &both})
	if got := strings.Count(both.String(), "\n"); got != 400 {
		t.Errorf("shared live copy holds %d lines, want 400", got)
	}
}

type failingWriter struct{ calls int }

func (w *failingWriter) Write([]byte) (int, error) {
	w.calls++
	return 0, errors.New("broken")
}

func TestRunFailingLiveWriter(t *testing.T) {
	t.Parallel()
	w := new(failingWriter)
	res := runBounded(t, testCtx(t), Spec{Shell: "echo a; echo b; echo c", Stdout: w})
	if res.ExitCode != 0 || string(res.Stdout) != "a\nb\nc\n" {
		t.Errorf("got ExitCode %d, Stdout %q; want 0 and all output", res.ExitCode, res.Stdout)
	}
	if w.calls != 1 {
		t.Errorf("failing live writer called %d times, want once", w.calls)
	}
}

func TestRunArgvHasNoShell(t *testing.T) {
	t.Parallel()
	res := runBounded(t, testCtx(t), Spec{Argv: []string{"printf", "%s|%s|%s", "$HOME", "a b", "*"}})
	if got, want := string(res.Stdout), "$HOME|a b|*"; got != want {
		t.Errorf("Stdout = %q, want %q", got, want)
	}
}

func TestRunEnvAndDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	res := runBounded(t, testCtx(t), Spec{
		Shell: `printf '%s|%s|%s|%s|' "$GRIT_A" "$HOME" "$PWD" "$PATH"; pwd -P`,
		Env:   []string{"GRIT_A=1", "HOME=/nowhere", "GRIT_A=2"},
		Dir:   dir,
	})
	want := "2|/nowhere|" + dir + "|" + os.Getenv("PATH") + "|" + real + "\n"
	if got := string(res.Stdout); got != want {
		t.Errorf("Stdout = %q, want %q (later Env wins, PWD follows Dir, PATH inherited)", got, want)
	}
	if os.Getenv("HOME") == "/nowhere" {
		t.Error("Spec.Env leaked into the worker's environment")
	}
}

func TestRunDirWithoutEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := runBounded(t, testCtx(t), Spec{Shell: `echo "$PWD"`, Dir: dir})
	if got := strings.TrimSpace(string(res.Stdout)); got != dir {
		t.Errorf("PWD = %q, want %q", got, dir)
	}
}

func TestRunStartErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		spec Spec
		is   error
		want string
	}{
		{"not in PATH", t.Context(), Spec{Argv: []string{"grit-no-such-program"}}, exec.ErrNotFound,
			`proc: start "grit-no-such-program": exec: "grit-no-such-program": executable file not found in $PATH`},
		{"no such file", t.Context(), Spec{Argv: []string{filepath.Join(dir, "missing")}}, fs.ErrNotExist,
			"no such file or directory"},
		{"not executable", t.Context(), Spec{Argv: []string{file}}, fs.ErrPermission,
			"permission denied"},
		{"missing dir", t.Context(), Spec{Shell: "true", Dir: filepath.Join(dir, "missing")}, fs.ErrNotExist,
			`proc: start sh -c "true": dir: stat ` + filepath.Join(dir, "missing") + ": no such file or directory"},
		{"dir is a file", t.Context(), Spec{Argv: []string{"true"}, Dir: file}, syscall.ENOTDIR,
			`proc: start "true": dir: chdir ` + file + ": not a directory"},
		{"invalid spec", t.Context(), Spec{}, ErrInvalidSpec,
			"proc: invalid spec: set Argv or Shell"},
		{"context already done", cancelled, Spec{Shell: "true"}, context.Canceled,
			`proc: start sh -c "true": context canceled`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := awaitRun(t, startRun(tt.ctx, tt.spec))
			if err == nil {
				t.Fatalf("Run = %+v, nil; want an error", res)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("Run error %q does not match %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run error = %q, want it to contain %q", err, tt.want)
			}
			if res.Pid != 0 {
				t.Errorf("Result.Pid = %d after a failed start, want 0", res.Pid)
			}
		})
	}
}

func TestSignalName(t *testing.T) {
	t.Parallel()
	tests := map[syscall.Signal]string{
		syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGSEGV: "SIGSEGV",
		syscall.Signal(40): "SIG40",
	}
	for sig, want := range tests {
		if got := signalName(sig); got != want {
			t.Errorf("signalName(%d) = %q, want %q", sig, got, want)
		}
	}
}
