package proctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
)

// TestAwaitMatchesWholeWords: "claimed 1" is the start of "claimed 1
// attempt 2" and not of "claimed 12", and lines printed before the call
// count.
func TestAwaitMatchesWholeWords(t *testing.T) {
	t.Parallel()
	p := Start(t, "sh", exec.Command("sh", "-c", "echo claimed 12; echo claimed 1 attempt 2; echo oops >&2; printf 'last'"))
	if got := p.Await(t, "claimed 1", 10*time.Second); got != "claimed 1 attempt 2" {
		t.Errorf("Await(claimed 1) = %q, want %q", got, "claimed 1 attempt 2")
	}
	if err := p.Wait(t, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, want := p.Lines(), []string{"claimed 12", "claimed 1 attempt 2", "last"}; !slices.Equal(got, want) {
		t.Errorf("Lines() = %q, want %q (stdout only, the last line without its newline too)", got, want)
	}
}

// TestSignalReachesTheGroup: a signal to a Proc reaches the processes it
// started.
func TestSignalReachesTheGroup(t *testing.T) {
	t.Parallel()
	p := Start(t, "sh", exec.Command("sh", "-c", "sleep 60 & echo started $!; wait"))
	child, err := strconv.Atoi(strings.TrimPrefix(p.Await(t, "started", 10*time.Second), "started "))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(t, 10*time.Second); err == nil {
		t.Error("killed, it exited 0")
	}
	poll.Until(t, 10*time.Second, fmt.Sprintf("its child %d to die with it", child), func() bool { return !running(child) })
}

// running tells whether process pid runs: it exists and is not a zombie
// waiting for whoever inherited it to reap it.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil // no /proc: ask the kernel
	}
	// The state follows the command's name, in parentheses.
	rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}
