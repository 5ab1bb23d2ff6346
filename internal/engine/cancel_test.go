package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// sqliteCancelOnClaim and postgresCancelOnClaim cancel every task they
// claim, through the store, before the engine sees the claim: an
// operator's cancel acknowledged just after the claim, before the
// attempt could start.
type sqliteCancelOnClaim struct{ *sqlite.Store }

func (s sqliteCancelOnClaim) Claim(ctx context.Context, req store.ClaimRequest) ([]task.Task, error) {
	return cancelClaimed(ctx, s.Store, req)
}

type postgresCancelOnClaim struct{ *postgres.Store }

func (s postgresCancelOnClaim) Claim(ctx context.Context, req store.ClaimRequest) ([]task.Task, error) {
	return cancelClaimed(ctx, s.Store, req)
}

func cancelClaimed(ctx context.Context, st store.Store, req store.ClaimRequest) ([]task.Task, error) {
	ts, err := st.Claim(ctx, req)
	for _, t := range ts {
		if _, err := st.Act(ctx, t.ID, task.ActCancel); err != nil {
			return nil, err
		}
	}
	return ts, err
}

// TestCancelledBeforeStartNeverStarts: a task cancelled between its
// claim and the start of its process is not started, on either store,
// although the heartbeat would not have told the worker for a while.
func TestCancelledBeforeStartNeverStarts(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) (store.Store, store.Store){
		"sqlite": func(t *testing.T) (store.Store, store.Store) {
			st := newSQLite(t)
			return sqliteCancelOnClaim{st}, st
		},
		"postgres": func(t *testing.T) (store.Store, store.Store) {
			st := pgtest.Open(t)
			return postgresCancelOnClaim{st}, st
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wrapped, st := open(t)
			mark := filepath.Join(t.TempDir(), "started")
			tk := enqueue(t, st, task.NewTask{Kind: "exec", Args: execArgs(t, task.Exec{Shell: "touch " + mark + "; sleep 30"})})
			cfg := testConfig(wrapped)
			cfg.Lease, cfg.Heartbeat = 30*time.Second, 10*time.Second // the heartbeat does not come to the rescue
			e := start(t, cfg)
			waitFor(t, 20*time.Second, func() bool { return e.Stats().Claimed.Load() >= 1 && len(e.leases()) == 0 },
				func() string { return "the cancelled task's attempt never ended" })
			if _, err := os.Stat(mark); err == nil {
				t.Fatal("the process of a task cancelled before it started was started")
			}
			if got := waitState(t, st, tk.ID, task.Cancelled); got.Attempt != 1 {
				t.Errorf("task %+v, want CANCELLED after its one claim", got)
			}
		})
	}
}

// TestCancelStopsARunningProcessAtOnce: an operator's cancel of a task
// whose process runs stops the process (SIGTERM, as a timeout does) within
// a second, well before the next heartbeat would have found the lease
// gone: through the same store on SQLite, through another handle (another
// process, as far as the worker can tell) on PostgreSQL.
func TestCancelStopsARunningProcessAtOnce(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) (worker, operator store.Store){
		"sqlite": func(t *testing.T) (store.Store, store.Store) {
			st := newSQLite(t)
			return st, st
		},
		"postgres": func(t *testing.T) (store.Store, store.Store) {
			schema := pgtest.NewSchema(t)
			return pgtest.OpenIn(t, schema), pgtest.OpenIn(t, schema)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			worker, operator := open(t)
			dir := t.TempDir()
			pidFile, termFile := filepath.Join(dir, "pid"), filepath.Join(dir, "term")
			script := "trap 'echo term > " + termFile + "; exit 0' TERM; echo $$ > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; sleep 60 & wait"
			tk := enqueue(t, worker, task.NewTask{Kind: "exec", Args: execArgs(t, task.Exec{Shell: script})})
			cfg := testConfig(worker)
			cfg.Lease, cfg.Heartbeat = 30*time.Second, 10*time.Second
			start(t, cfg)
			var pid int
			waitFor(t, 20*time.Second, func() bool {
				b, err := os.ReadFile(pidFile)
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				return err == nil && pid > 0
			}, func() string { return "the task's process never started" })
			if _, err := operator.Act(context.Background(), tk.ID, task.ActCancel); err != nil {
				t.Fatal(err)
			}
			cancelled := time.Now()
			waitFor(t, 20*time.Second, func() bool { return syscall.Kill(pid, 0) != nil },
				func() string { return "the cancelled task's process still runs" })
			if took := time.Since(cancelled); took > 2*time.Second {
				t.Errorf("the cancelled task's process ran %v after the cancel, want under 2s (the heartbeat is every %v)", took, cfg.Heartbeat)
			}
			if _, err := os.Stat(termFile); err != nil {
				t.Errorf("the process was not sent SIGTERM: %v", err)
			}
		})
	}
}
