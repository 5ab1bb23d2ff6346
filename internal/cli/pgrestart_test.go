package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// privatePostgres is a PostgreSQL cluster of the test's own, so that it can
// be stopped and started without touching the server other tests use.
type privatePostgres struct {
	bin, data, sock, log string
	port                 int
	asUser               string // "" to run the tools as ourselves
}

// newPrivatePostgres makes and starts a cluster in a temporary directory.
// When it cannot (no PostgreSQL binaries, no way to run them), the test
// fails under CI=true and is skipped loudly elsewhere.
func newPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	unavailable := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") == "true" {
			t.Fatalf("a private PostgreSQL cluster is needed: %s", msg)
		}
		t.Skipf("\n*** SKIPPED: a private PostgreSQL cluster is needed: %s ***", msg)
	}
	bin := postgresBin()
	if bin == "" {
		unavailable("no initdb and pg_ctl found (install postgresql)")
	}
	dir, err := os.MkdirTemp("", "grit-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := &privatePostgres{bin: bin, data: filepath.Join(dir, "data"), sock: dir, log: filepath.Join(dir, "log"), port: freePort(t)}
	if os.Getuid() == 0 { // initdb refuses to run as root
		u, err := user.Lookup("postgres")
		if err != nil {
			unavailable("running as root and there is no postgres user to run PostgreSQL as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		p.asUser = "postgres"
	}
	if out, err := p.run("initdb", "-D", p.data, "-A", "trust", "-U", "postgres", "--no-sync"); err != nil {
		unavailable("initdb: %v\n%s", err, out)
	}
	p.start(t)
	t.Cleanup(func() { p.run("pg_ctl", "-D", p.data, "-m", "immediate", "stop") })
	return p
}

func postgresBin() string {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); fileExists(filepath.Join(dir, "initdb")) {
			return dir
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		return ""
	}
	return filepath.Dir(matches[len(matches)-1])
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// run runs a PostgreSQL tool, as the postgres user when we are root.
func (p *privatePostgres) run(tool string, args ...string) ([]byte, error) {
	path := filepath.Join(p.bin, tool)
	if p.asUser == "" {
		return exec.Command(path, args...).CombinedOutput()
	}
	quoted := []string{path}
	for _, a := range args {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return exec.Command("su", p.asUser, "-s", "/bin/sh", "-c", strings.Join(quoted, " ")).CombinedOutput()
}

func (p *privatePostgres) start(t *testing.T) {
	t.Helper()
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off", p.port, p.sock)
	if out, err := p.run("pg_ctl", "-D", p.data, "-l", p.log, "-o", opts, "-w", "start"); err != nil {
		log, _ := os.ReadFile(p.log)
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// crash stops the cluster at once, as a power cut would.
func (p *privatePostgres) crash(t *testing.T) {
	t.Helper()
	if out, err := p.run("pg_ctl", "-D", p.data, "-m", "immediate", "stop"); err != nil {
		t.Fatalf("pg_ctl stop -m immediate: %v\n%s", err, out)
	}
}

func (p *privatePostgres) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
}

// TestWorkersSurviveADatabaseRestart stops PostgreSQL with -m immediate
// while two workers run tasks, starts it again once the outage has
// outlasted both workers' leases, and checks that the workers did not
// crash, lost no committed task, and drained the run within 30s of the
// database's return.
func TestWorkersSurviveADatabaseRestart(t *testing.T) {
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
	const n = 400
	args, _ := json.Marshal(task.Exec{Shell: `sleep 0.05; echo "$GRIT_TASK_ID" >> ` + filepath.Join(dir, "ledger")})
	ts := make([]task.NewTask, n)
	for i := range ts {
		ts[i] = task.NewTask{Kind: task.KindExec, Args: args, Policy: "10 100ms 1s"}
	}
	if _, err := st.Enqueue(t.Context(), ts); err != nil {
		t.Fatal(err)
	}
	workerArgs := []string{"worker", "--store", dsn, "--lease", "3s", "--heartbeat", "1s", "--concurrency", "4"}
	a, aOut := gritProcess(t, dir, workerArgs...)
	b, bOut := gritProcess(t, dir, workerArgs...)
	succeeded := func(s store.Store) map[int64]int {
		done, err := s.ListTasks(t.Context(), task.Filter{States: []task.State{task.Success}})
		if err != nil {
			return nil
		}
		m := map[int64]int{}
		for _, tk := range done {
			m[tk.ID] = tk.Attempt
		}
		return m
	}
	poll.Until(t, 60*time.Second, "50 tasks to succeed", func() bool { return len(succeeded(st)) >= 50 })
	st.Close()

	// The outage lasts until it has outlasted each worker's lease: both
	// say so, and cancel their attempts.
	const lost = "no heartbeat renewed the leases for a whole lease"
	aLost, bLost := strings.Count(aOut.String(), lost), strings.Count(bOut.String(), lost)
	pg.crash(t)
	poll.Until(t, 60*time.Second, "both workers to lose their leases to the outage", func() bool {
		return strings.Count(aOut.String(), lost) > aLost && strings.Count(bOut.String(), lost) > bLost
	})
	pg.start(t)
	back := time.Now()

	st2, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	before := succeeded(st2) // what had been committed before the crash
	poll.Until(t, 60*time.Second, "the run to drain", func() bool { return len(succeeded(st2)) == n })
	if took := time.Since(back); took > 30*time.Second {
		t.Errorf("the run drained %v after the database returned, want within 30s", took)
	}
	for _, w := range []*exec.Cmd{a, b} {
		if w.ProcessState != nil {
			t.Errorf("a worker exited during the outage:\n%s\n%s", aOut, bOut)
		}
	}
	after := succeeded(st2)
	for id, attempts := range before {
		if after[id] != attempts {
			t.Errorf("task %d: SUCCESS after %d attempts before the restart, %d after", id, attempts, after[id])
		}
	}
	for _, w := range []*exec.Cmd{a, b} {
		w.Process.Signal(syscall.SIGTERM)
	}
	waitExit(t, a, 30*time.Second, aOut)
	waitExit(t, b, 30*time.Second, bOut)
}
