package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// TestSilentDatabaseKillsTheAttempts freezes PostgreSQL with SIGSTOP (the
// postmaster and every backend: connections stay open, nothing answers,
// new ones hang) while a worker runs a process task that ignores SIGTERM,
// and checks that the worker has killed the process within lease + 1s of
// the freeze: a sibling could take the task over from then on.
func TestSilentDatabaseKillsTheAttempts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster of its own; runs without -short")
	}
	pg := newPrivatePostgres(t)
	dir := t.TempDir()
	dsn := pg.dsn()
	st, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(dir, "pid")
	args, _ := json.Marshal(task.Exec{Shell: fmt.Sprintf(`trap '' TERM; echo $$ > %s; exec sleep 300`, pidfile)})
	if _, err := st.Enqueue(t.Context(), []task.NewTask{{Kind: task.KindExec, Args: args}}); err != nil {
		t.Fatal(err)
	}
	const lease = 3 * time.Second
	gritProcess(t, dir, "worker", "--store", dsn, "--worker-id", "w", "--lease", lease.String(), "--heartbeat", "1s")
	var pid int
	poll.Until(t, 30*time.Second, "the worker to start the task", func() bool {
		b, err := os.ReadFile(pidfile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		held, herr := st.Held(t.Context())
		return err == nil && pid > 0 && herr == nil && held["w"] == 1
	})
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	st.Close()

	frozen := pg.freeze(t)
	frozeAt := time.Now()
	poll.Until(t, 20*time.Second, fmt.Sprintf("the task's process %d to be killed", pid), func() bool { return processGone(pid) })
	if took := time.Since(frozeAt); took > lease+time.Second {
		t.Errorf("the process was killed %v after the database froze, want within the lease (%v) + 1s", took, lease)
	}
	thaw(frozen)
}

// freeze stops the cluster's postmaster and every process it started with
// SIGSTOP, and returns them for thaw, which the test's end calls too.
func (p *privatePostgres) freeze(t *testing.T) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.data, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	master, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	pids := append([]int{master}, childrenOf(master)...)
	t.Cleanup(func() { thaw(pids) })
	for _, pid := range pids {
		// A backend may end between the listing and the signal (the test's
		// own connections, just closed, or an autovacuum worker done):
		// nothing of it is left to freeze.
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("SIGSTOP %d: %v", pid, err)
		}
	}
	return pids
}

func thaw(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGCONT)
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var kids []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, child)
		}
	}
	return kids
}
