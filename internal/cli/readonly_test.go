package cli

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// TestWorkerWaitsForAReadOnlyDatabase: a worker started while its
// PostgreSQL is read-only (here its role's sessions are, as a standby's
// would be) says why and waits instead of exiting; grit status, which only
// reads, works there and says the database is read-only; once the
// database is writable again, the worker starts and works the task.
func TestWorkerWaitsForAReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	schema := pgtest.NewSchema(t)
	admin := pgtest.WithSchema(schema)
	dir := t.TempDir()
	file := filepath.Join(dir, "one.yaml")
	if err := os.WriteFile(file, []byte("name: one\ntasks:\n  only: {run: \"true\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := grit(t, "submit", "--store", admin, file); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}

	ctx := t.Context()
	db := pgtest.Admin(t)
	role, password := fmt.Sprintf("grit_rw_%08x", rand.Uint32()), fmt.Sprintf("pw%016x", rand.Uint64())
	if _, err := db.Exec(ctx, `CREATE ROLE `+role+` LOGIN SUPERUSER PASSWORD '`+password+`'`); err != nil {
		t.Fatalf("create a role (the test user needs CREATEROLE): %v", err)
	}
	t.Cleanup(func() { db.Exec(t.Context(), `DROP ROLE `+role) })
	if _, err := db.Exec(ctx, `ALTER ROLE `+role+` SET default_transaction_read_only = on`); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, password)
	dsn := u.String()

	worker, out := gritProcess(t, dir, "worker", "--store", dsn, "--drain", "5s")
	poll.Until(t, 30*time.Second, "the worker to say the store is read-only", func() bool {
		return strings.Contains(out.String(), "the store is read-only: waiting")
	})
	if code, stdout, errOut := grit(t, "status", "--store", dsn); code != 0 || !strings.Contains(stdout, "store: the database is read-only") {
		t.Errorf("status on the read-only database: exit %d, stdout:\n%s\nstderr: %s\nwant it to say the database is read-only", code, stdout, errOut)
	}
	if worker.ProcessState != nil {
		t.Fatalf("the worker exited on a read-only database:\n%s", out)
	}

	if _, err := db.Exec(ctx, `ALTER ROLE `+role+` RESET default_transaction_read_only`); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	poll.Until(t, 60*time.Second, "the worker to start and work the task", func() bool {
		ts := runTasks(t, st)
		return len(ts) == 1 && ts[0].State == task.Success
	})
	if err := worker.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, worker, 30*time.Second, out); code != 0 {
		t.Fatalf("worker exited %d:\n%s", code, out)
	}
}
