package pgtest

import (
	"context"
	"errors"
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

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/internal/poll"
)

// Cluster is a PostgreSQL cluster of a test's own, in a temporary
// directory on a free port, so that the test can crash, freeze, replicate
// and promote it without touching the server other tests use. Its
// superuser is postgres, trusted without a password.
type Cluster struct {
	// Port is the port it listens on, at 127.0.0.1.
	Port int
	// Data is its data directory.
	Data string

	bin, sock, log string
	asUser         string // "" to run the tools as ourselves
}

// clusterTools are the PostgreSQL programs a Cluster runs.
var clusterTools = []string{"initdb", "pg_ctl", "pg_basebackup"}

// NewCluster makes and starts a cluster in a temporary directory, stopped
// when the test ends. When it cannot (no PostgreSQL binaries, no way to
// run them), the test fails under CI=true and is skipped loudly elsewhere.
// As root it runs the PostgreSQL programs as the postgres user, for they
// refuse to run as root.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	bin, missing := clusterBin()
	if bin == "" {
		unavailable(t, "no %s found in pg_config --bindir or /usr/lib/postgresql/*/bin (install postgresql)", strings.Join(missing, ", "))
	}
	// Not t.TempDir: its parent is private to us, and as root the
	// cluster's owner must reach its directory.
	dir, err := os.MkdirTemp("", "grit-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &Cluster{bin: bin, Data: filepath.Join(dir, "data"), sock: dir, log: filepath.Join(dir, "log"), Port: FreePort(t)}
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			unavailable(t, "running as root and there is no postgres user to run PostgreSQL as (create one, or run the tests as another user)")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.asUser = "postgres"
	}
	if out, err := c.run("initdb", "-D", c.Data, "-A", "trust", "-U", "postgres", "--no-sync"); err != nil {
		unavailable(t, "initdb: %v\n%s", err, out)
	}
	c.Start(t)
	t.Cleanup(func() { c.run("pg_ctl", "-D", c.Data, "-m", "immediate", "stop") })
	return c
}

func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("a private PostgreSQL cluster is needed: %s", msg)
	}
	t.Skipf("\n*** SKIPPED: a private PostgreSQL cluster is needed: %s ***", msg)
}

// clusterBin is the directory of the PostgreSQL programs, or "" with the
// ones missing.
func clusterBin() (string, []string) {
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(found) - 1; i >= 0; i-- { // the newest first
		dirs = append(dirs, found[i])
	}
	for _, d := range dirs {
		if len(missingTools(d)) == 0 {
			return d, nil
		}
	}
	return "", clusterTools
}

func missingTools(dir string) []string {
	var missing []string
	for _, tool := range clusterTools {
		if _, err := os.Stat(filepath.Join(dir, tool)); err != nil {
			missing = append(missing, tool)
		}
	}
	return missing
}

// FreePort is a TCP port of 127.0.0.1 that nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// run runs a PostgreSQL program, as the postgres user when we are root.
func (c *Cluster) run(tool string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, tool)
	if c.asUser == "" {
		return exec.Command(path, args...).CombinedOutput()
	}
	quoted := []string{path}
	for _, a := range args {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return exec.Command("su", c.asUser, "-s", "/bin/sh", "-c", strings.Join(quoted, " ")).CombinedOutput()
}

// Start starts the cluster and waits until it takes connections.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off", c.Port, c.sock)
	if out, err := c.run("pg_ctl", "-D", c.Data, "-l", c.log, "-o", opts, "-w", "start"); err != nil {
		log, _ := os.ReadFile(c.log)
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// Crash stops the cluster at once (pg_ctl -m immediate), as a power cut
// would; Start starts it again, with crash recovery.
func (c *Cluster) Crash(t testing.TB) {
	t.Helper()
	if out, err := c.run("pg_ctl", "-D", c.Data, "-m", "immediate", "stop"); err != nil {
		t.Fatalf("pg_ctl stop -m immediate: %v\n%s", err, out)
	}
}

// Kill ends the cluster's postmaster and every process it started with
// SIGKILL, as the death of its host would: nothing is written or said to
// anyone on the way out.
func (c *Cluster) Kill(t testing.TB) {
	t.Helper()
	master := c.postmaster(t)
	// Stopped first, it forks no backend between the listing and the kill.
	if err := syscall.Kill(master, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP the postmaster %d: %v", master, err)
	}
	for _, pid := range append(ChildrenOf(master), master) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("SIGKILL %d: %v", pid, err)
		}
	}
}

// Freeze stops the cluster's postmaster and every process it started with
// SIGSTOP: connections stay open, nothing answers, new ones hang. The
// returned function, which the test's end calls too, thaws them.
func (c *Cluster) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	master := c.postmaster(t)
	pids := append([]int{master}, ChildrenOf(master)...)
	thaw = func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(thaw)
	for _, pid := range pids {
		// A backend may end between the listing and the signal (the test's
		// own connections, just closed, or an autovacuum worker done):
		// nothing of it is left to freeze.
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("SIGSTOP %d: %v", pid, err)
		}
	}
	return thaw
}

func (c *Cluster) postmaster(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.Data, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	return pid
}

// ChildrenOf lists the processes whose parent is pid.
func ChildrenOf(pid int) []int {
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

// DSN is the URL of the cluster's postgres database.
func (c *Cluster) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
}

// Standby makes a hot standby of the cluster (pg_basebackup -R: it
// streams the primary's WAL), starts it on a port of its own, and waits
// until it streams. With sync, the primary then waits for the standby to
// have each commit on disk before it acknowledges it
// (synchronous_standby_names '*', synchronous_commit on): an acknowledged
// write survives the primary's death once the standby is promoted. The
// standby itself keeps no such setting, so that, promoted and alone, it
// acknowledges at once.
func (c *Cluster) Standby(t testing.TB, sync bool) *Cluster {
	t.Helper()
	s := *c
	s.Port, s.Data, s.log = FreePort(t), c.Data+"-standby", c.log+"-standby"
	if out, err := c.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", "postgres",
		"-D", s.Data, "-R", "--checkpoint=fast", "--wal-method=stream", "--no-sync"); err != nil {
		t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	s.Start(t)
	t.Cleanup(func() { s.run("pg_ctl", "-D", s.Data, "-m", "immediate", "stop") })
	want := "async"
	if sync {
		want = "sync"
		c.exec(t, `ALTER SYSTEM SET synchronous_standby_names = '*'`, `SELECT pg_reload_conf()`)
	}
	c.waitFor(t, 30*time.Second, "the standby to stream as "+want,
		`SELECT count(*) = 1 FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = $1`, want)
	return &s
}

// Promote makes a standby the primary (pg_ctl promote) and waits until it
// takes writes.
func (c *Cluster) Promote(t testing.TB) {
	t.Helper()
	if out, err := c.run("pg_ctl", "-D", c.Data, "-w", "promote"); err != nil {
		t.Fatalf("pg_ctl promote: %v\n%s", err, out)
	}
	c.waitFor(t, 30*time.Second, "the promoted standby to take writes", `SELECT NOT pg_is_in_recovery()`)
}

// exec runs statements on the cluster's postgres database.
func (c *Cluster) exec(t testing.TB, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN())
	if err != nil {
		t.Fatalf("connect to the cluster on port %d: %v", c.Port, err)
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// waitFor waits until query, which returns one boolean, returns true.
func (c *Cluster) waitFor(t testing.TB, within time.Duration, what, query string, args ...any) {
	t.Helper()
	var last error
	poll.UntilSays(t, within, func() string {
		log, _ := os.ReadFile(c.log)
		return fmt.Sprintf("waiting for %s (last error: %v)\n%s", what, last, log)
	}, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, c.DSN())
		if err != nil {
			last = err
			return false
		}
		defer conn.Close(context.Background())
		var ok bool
		last = conn.QueryRow(ctx, query, args...).Scan(&ok)
		return last == nil && ok
	})
}

// CatchUp waits until the standby has replayed the primary's WAL as it is
// now.
func (c *Cluster) CatchUp(t testing.TB, primary *Cluster) {
	t.Helper()
	var lsn string
	primary.query(t, `SELECT pg_current_wal_lsn()::text`, &lsn)
	c.waitFor(t, 30*time.Second, "the standby to replay the primary's WAL up to "+lsn,
		`SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, lsn)
}

// HoldWAL stops the standby's WAL receiver with SIGSTOP: from then on the
// standby receives nothing of the primary's, as if the network between
// them had gone quiet. The returned function, which the test's end calls
// too, lets it go on.
func (c *Cluster) HoldWAL(t testing.TB) (release func()) {
	t.Helper()
	var pid int
	c.query(t, `SELECT pid FROM pg_stat_wal_receiver`, &pid)
	release = func() { syscall.Kill(pid, syscall.SIGCONT) }
	t.Cleanup(release)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP the WAL receiver %d: %v", pid, err)
	}
	return release
}

// query reads one row of the cluster's postgres database into dst.
func (c *Cluster) query(t testing.TB, q string, dst ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN())
	if err != nil {
		t.Fatalf("connect to the cluster on port %d: %v", c.Port, err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(ctx, q).Scan(dst...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
