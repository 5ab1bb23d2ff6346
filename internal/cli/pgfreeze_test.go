package cli

import (
	"encoding/json"
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
	"github.com/grit-run/grit/store/postgres/pgtest"
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
	pg := pgtest.NewCluster(t)
	dir := t.TempDir()
	dsn := pg.DSN()
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

	thaw := pg.Freeze(t)
	frozeAt := time.Now()
	poll.Until(t, 20*time.Second, fmt.Sprintf("the task's process %d to be killed", pid), func() bool { return processGone(pid) })
	if took := time.Since(frozeAt); took > lease+time.Second {
		t.Errorf("the process was killed %v after the database froze, want within the lease (%v) + 1s", took, lease)
	}
	thaw()
}
