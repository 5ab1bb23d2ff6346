package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// run is a chaos run in progress.
type run struct {
	cfg    Config
	rng    *rand.Rand
	ledger string

	workers []*worker

	mu     sync.Mutex
	acked  []int64 // ids of the tasks whose enqueue returned
	failed int     // enqueues that returned an error (not acknowledged)
	faults []fault
}

// fault is one fault injected: on a worker (kill, stop) or the database
// (pg-restart), from At until End (a kill is an instant).
type fault struct {
	Kind    string
	Worker  string
	At, End time.Time
}

// worker is one grit worker process, restartable under its identity.
type worker struct {
	id  string
	cmd *exec.Cmd
	log *os.File
}

func (r *run) startFleet() error {
	for i := range r.cfg.Workers {
		w := &worker{id: fmt.Sprintf("chaos-%d", i+1)}
		r.workers = append(r.workers, w)
		if err := r.start(w); err != nil {
			return err
		}
	}
	return nil
}

// start starts (or restarts) w; its output goes to its log file.
func (r *run) start(w *worker) error {
	if w.log == nil {
		f, err := os.Create(filepath.Join(r.cfg.Dir, w.id+".log"))
		if err != nil {
			return fmt.Errorf("chaos: %w", err)
		}
		w.log = f
	}
	cmd := exec.Command(r.cfg.Exe, "worker", "--store", r.cfg.DSN, "--worker-id", w.id, "--concurrency", "16",
		"--lease", r.cfg.Lease.String(), "--heartbeat", (r.cfg.Lease / 3).String(), "--drain", "10s")
	cmd.Env = append(os.Environ(), r.cfg.Env...)
	cmd.Stdout, cmd.Stderr = w.log, w.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("chaos: start worker %s: %w", w.id, err)
	}
	w.cmd = cmd
	return nil
}

// stopFleet stops every worker with SIGTERM (SIGKILL after 30s).
func (r *run) stopFleet() {
	for _, w := range r.workers {
		if w.cmd != nil {
			w.cmd.Process.Signal(syscall.SIGCONT)
			w.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, w := range r.workers {
		if w.cmd == nil {
			continue
		}
		t := time.AfterFunc(30*time.Second, func() { w.cmd.Process.Kill() })
		w.cmd.Wait()
		t.Stop()
		w.log.Close()
	}
}

// load enqueues cfg.Rate short process tasks a second, in batches every
// 100ms, until ctx ends. Each writes a start and an end line to the
// ledger, with its task id, attempt and lease token.
func (r *run) load(ctx context.Context) {
	body := fmt.Sprintf(`echo "$GRIT_TASK_ID $GRIT_ATTEMPT $GRIT_LEASE_TOKEN start" >> %[1]s; sleep 0.$(( $GRIT_TASK_ID %% 5 ))5; echo "$GRIT_TASK_ID $GRIT_ATTEMPT $GRIT_LEASE_TOKEN end" >> %[1]s`, r.ledger)
	args, _ := json.Marshal(task.Exec{Shell: body})
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	owed := 0.0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		owed += float64(r.cfg.Rate) / 10
		n := int(owed)
		owed -= float64(n)
		ts := make([]task.NewTask, n)
		for i := range ts {
			ts[i] = task.NewTask{Kind: task.KindExec, Args: args, Policy: "30 100ms 2s"}
		}
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		res, err := r.cfg.Store.Enqueue(ectx, ts)
		cancel()
		r.mu.Lock()
		if err != nil {
			r.failed += n
		} else {
			for _, e := range res {
				r.acked = append(r.acked, e.Task.ID)
			}
		}
		r.mu.Unlock()
	}
}

// settle waits until every acknowledged task is final, or cfg.Settle.
func (r *run) settle(ctx context.Context) bool {
	o, ok := r.cfg.Store.(store.Overview)
	if !ok {
		return false
	}
	deadline := time.Now().Add(r.cfg.Settle)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		cs, err := o.QueueCounts(ctx)
		if err == nil && allFinal(cs) {
			return true
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	return false
}

func allFinal(cs []store.QueueCount) bool {
	for _, c := range cs {
		if c.N > 0 && !c.State.Terminal() && c.State != task.DeadLetter {
			return false
		}
	}
	return true
}
