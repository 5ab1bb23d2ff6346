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
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// TestKilledWorkersGrandchildDiesBesideALiveSibling runs a shell task that
// leaves a background grandchild on a worker process, with a sibling
// worker already running on the same host, and kills the first worker
// with SIGKILL. Pdeathsig takes the task's shell with it, not the
// grandchild; the sibling, which started before the kill, ends the
// grandchild within a heartbeat (at least a second) and a second of the
// kill, and takes the task over when its lease expires.
func TestKilledWorkersGrandchildDiesBesideALiveSibling(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	schema := pgtest.NewSchema(t)
	dsn := pgtest.WithSchema(schema)
	st := pgtest.OpenIn(t, schema)
	gcFile := filepath.Join(dir, "grandchild")
	script := fmt.Sprintf(`if [ "$GRIT_ATTEMPT" = 1 ]; then sleep 300 & echo $! > %s; wait; fi`, gcFile)
	args, _ := json.Marshal(task.Exec{Shell: script})
	ts, err := st.Enqueue(t.Context(), []task.NewTask{{Kind: task.KindExec, Args: args, Policy: "5 100ms 1s"}})
	if err != nil {
		t.Fatal(err)
	}
	const heartbeat = time.Second
	workerArgs := []string{"worker", "--store", dsn, "--lease", "3s", "--heartbeat", heartbeat.String(), "--concurrency", "2"}
	first, firstOut := gritProcess(t, dir, append(workerArgs, "--worker-id", "first")...)
	var gc int
	poll.Until(t, 30*time.Second, "the first worker to start the task's grandchild", func() bool {
		b, err := os.ReadFile(gcFile)
		gc, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		held, herr := st.Held(t.Context())
		return err == nil && gc > 0 && herr == nil && held["first"] == 1
	})
	t.Cleanup(func() { syscall.Kill(gc, syscall.SIGKILL) })
	_, siblingOut := gritProcess(t, dir, append(workerArgs, "--worker-id", "sibling")...)
	poll.Until(t, 30*time.Second, "the sibling to start", func() bool {
		return strings.Contains(siblingOut.String(), "worker started")
	})

	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	// At once, before waiting for the killed worker to be reaped: the
	// sibling's sweep (once a heartbeat) ends the grandchild as soon as it
	// sees the worker dead, so a grandchild gone later may have died by
	// the sibling's hand, as it should; one gone now died with its worker.
	if processGone(gc) {
		t.Fatal("the grandchild died with its worker: the test proves nothing")
	}
	waitExit(t, first, 10*time.Second, firstOut)
	bound := max(heartbeat, time.Second) + time.Second
	poll.Until(t, 20*time.Second, fmt.Sprintf("the killed worker's grandchild %d to die", gc), func() bool { return processGone(gc) })
	if took := time.Since(killedAt); took > bound {
		t.Errorf("the grandchild died %v after its worker, want within %v", took, bound)
	}
	poll.Until(t, 30*time.Second, "the sibling to take the task over and finish it", func() bool {
		got, err := st.GetTask(t.Context(), ts[0].ID)
		return err == nil && got.State == task.Success
	})
}
