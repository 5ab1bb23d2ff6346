package pgtest

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// bouncerStart bounds the wait for a PgBouncer to listen.
const bouncerStart = 20 * time.Second

// Bouncer starts a PgBouncer of the test's own in front of the test
// database, in transaction mode with every other setting at PgBouncer's
// default, and returns the test DSN pointed at it (with the schema
// parameter when schema is not ""). It stops when the test ends. When
// PgBouncer is not installed (Debian's package pgbouncer; scripts/test
// installs it) or cannot start, the test fails under CI=true and is
// skipped loudly elsewhere.
func Bouncer(t testing.TB, schema string) string {
	t.Helper()
	Admin(t) // the database behind it must be there first
	bin := bouncerBin()
	if bin == "" {
		bouncerUnavailable(t, "no pgbouncer found on PATH or in /usr/sbin: install it (apt-get install pgbouncer; scripts/test does)")
	}
	target, err := url.Parse(DSN())
	if err != nil {
		t.Fatalf("pgtest: GRIT_TEST_POSTGRES: %v", err)
	}
	dir := bouncerDir(t)
	port := freePort(t)
	ini := filepath.Join(dir, "pgbouncer.ini")
	if err := os.WriteFile(ini, []byte(bouncerINI(target, dir, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	users := fmt.Sprintf("%q %q\n", target.User.Username(), "")
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(users), 0o644); err != nil {
		t.Fatal(err)
	}
	startBouncer(t, bin, ini, port)
	q := target.Query()
	if schema != "" {
		q.Set("schema", schema)
	}
	through := *target
	through.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	through.RawQuery = q.Encode()
	return through.String()
}

// bouncerINI is the configuration: every database of the target's server,
// transaction pooling, trust (the test database trusts local
// connections), a TCP port of its own and no Unix socket, so that
// several can run at once.
func bouncerINI(target *url.URL, dir string, port int) string {
	host, tport := target.Hostname(), target.Port()
	if tport == "" {
		tport = "5432"
	}
	server := "host=" + host + " port=" + tport
	if pw, ok := target.User.Password(); ok {
		server += " password=" + pw
	}
	return strings.Join([]string{
		"[databases]",
		"* = " + server,
		"[pgbouncer]",
		"pool_mode = transaction",
		"listen_addr = 127.0.0.1",
		"listen_port = " + strconv.Itoa(port),
		"unix_socket_dir =",
		"auth_type = trust",
		"auth_file = " + filepath.Join(dir, "users.txt"),
		"",
	}, "\n")
}

func bouncerBin() string {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer"
	}
	return ""
}

func bouncerUnavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("PgBouncer is needed: %s", msg)
	}
	t.Skipf("\n*** SKIPPED: PgBouncer is needed: %s ***", msg)
}

// bouncerDir is the test's directory for the configuration, readable by
// the user PgBouncer runs as (it refuses to run as root).
func bouncerDir(t testing.TB) string {
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startBouncer runs pgbouncer (as the postgres user, or nobody, when we
// are root) until the test ends, and waits until it accepts connections.
func startBouncer(t testing.TB, bin, ini string, port int) {
	t.Helper()
	cmd := exec.Command(bin, ini)
	var log lockedLog
	cmd.Stdout, cmd.Stderr = &log, &log
	if os.Getuid() == 0 {
		uid, gid, err := unprivileged()
		if err != nil {
			bouncerUnavailable(t, "running as root, and %v", err)
		}
		runAs(cmd, uid, gid)
	}
	if err := cmd.Start(); err != nil {
		bouncerUnavailable(t, "start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(bouncerStart)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("pgbouncer exited before it listened on %s:\n%s", addr, log.String())
		case <-time.After(20 * time.Millisecond): // poll the port until it listens
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer did not listen on %s within %v:\n%s", addr, bouncerStart, log.String())
		}
	}
}

// unprivileged is the user PgBouncer runs as when we are root.
func unprivileged() (uid, gid int, err error) {
	for _, name := range []string{"postgres", "nobody"} {
		if u, err := user.Lookup(name); err == nil {
			uid, _ := strconv.Atoi(u.Uid)
			gid, _ := strconv.Atoi(u.Gid)
			return uid, gid, nil
		}
	}
	return 0, 0, fmt.Errorf("there is no postgres or nobody user to run pgbouncer as (it refuses root)")
}

// lockedLog collects PgBouncer's log while the test reads it.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
