package cli

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store/postgres/pgtest"
)

// gritExec runs grit as a process of its own (this test binary, see
// TestMain) in dir, and returns its exit code and output.
func gritExec(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	return gritExecEnv(t, dir, nil, args...)
}

// gritExecEnv is gritExec with variables (NAME=VALUE) added to its
// environment.
func gritExecEnv(t *testing.T, dir string, vars []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GRIT_TEST_AS_CLI=1", "GRIT_STORE="), vars...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("grit %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// readers are the commands that read a store or act on what is in it:
// none may create one.
var readers = [][]string{
	{"tasks"}, {"tasks", "--json"}, {"task", "1"}, {"status"}, {"dlq", "list"}, {"wait", "1"},
	{"limits"}, {"breakers"}, {"run", "--resume", "1"},
	{"dlq", "replay", "1"}, {"dlq", "skip", "1"}, {"dlq", "fail", "1"},
	{"breakers", "open", "api"}, {"breakers", "close", "api"}, {"breakers", "reset", "api"}, {"breakers", "set", "api", "--limit", "3"},
	{"limits", "set", "tenant", "acme", "5"}, {"limits", "weight"}, {"limits", "weight", "acme", "3"},
	{"send", "1", "approval", "1"},
}

// TestReadersCreateNoStore: on a --store where there is none, the commands
// that read fail with exit 2, saying where and what to do, and create no
// file or directory: neither at a mistyped path nor at the default.
func TestReadersCreateNoStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "dir", "x.db")
	for _, args := range readers {
		code, _, errOut := gritExec(t, dir, append(args, "--store", "sqlite:"+missing)...)
		if code != exitUsage || !strings.Contains(errOut, "no grit store at "+missing+": create one with grit migrate, grit submit or grit worker") {
			t.Errorf("grit %v: exit %d, %q; want 2 saying there is no store and how to make one", args, code, errOut)
		}
		code, _, errOut = gritExec(t, dir, args...) // the default, sqlite:grit.db
		if code != exitUsage || !strings.Contains(errOut, "no grit store at grit.db") {
			t.Errorf("grit %v on the default store: exit %d, %q", args, code, errOut)
		}
	}
	if code, _, _ := gritExec(t, dir, "config", "--store", "sqlite:"+missing); code != 0 {
		t.Errorf("config: exit %d", code)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the commands left %v behind", entries)
	}
	if code, out, _ := gritExec(t, dir, "migrate", "--store", "sqlite:"+missing); code != 0 || !strings.Contains(out, "schema up to date") {
		t.Fatalf("migrate: exit %d: %s", code, out)
	}
	if code, out, errOut := gritExec(t, dir, "tasks", "--store", "sqlite:"+missing); code != 0 || !strings.Contains(out, "STATE") {
		t.Errorf("tasks once migrated: exit %d: %s %s", code, out, errOut)
	}
}

// TestReadersOnReadOnlyPostgres: the commands that only read work in a
// read-only session, and say so clearly when the schema is not there or
// is older than this grit.
func TestReadersOnReadOnlyPostgres(t *testing.T) {
	t.Parallel()
	schema := pgtest.NewSchema(t)
	dsn := pgtest.WithSchema(schema)
	dir := t.TempDir()
	u, _ := url.Parse(dsn)
	q := u.Query()
	q.Set("default_transaction_read_only", "on")
	u.RawQuery = q.Encode()
	readOnly := u.String()

	if code, _, errOut := gritExec(t, dir, "tasks", "--store", readOnly); code != exitUsage || !strings.Contains(errOut, "no grit store at ") || !strings.Contains(errOut, "(schema "+schema+")") {
		t.Errorf("tasks without the schema: exit %d, %q", code, errOut)
	}
	if code, _, errOut := gritExec(t, dir, "migrate", "--store", readOnly); code == 0 || !strings.Contains(errOut, "read-only transaction") {
		t.Errorf("migrate in a read-only session: exit %d, %q", code, errOut)
	}
	if code, out, errOut := gritExec(t, dir, "run", "--json", "--store", dsn, example("flaky.yaml")); code != 0 {
		t.Fatalf("run: exit %d: %s %s", code, out, errOut)
	}
	for _, args := range [][]string{{"tasks"}, {"task", "1"}, {"status"}, {"dlq", "list"}, {"wait", "1"}, {"limits"}, {"breakers"}} {
		if code, _, errOut := gritExec(t, dir, append(args, "--store", readOnly)...); code != 0 {
			t.Errorf("grit %v read-only: exit %d, %s", args, code, errOut)
		}
	}
	if code, _, errOut := gritExec(t, dir, "breakers", "open", "api", "--store", readOnly); code == 0 || !strings.Contains(errOut, "read-only transaction") {
		t.Errorf("breakers open read-only: exit %d, %q; want the database's refusal", code, errOut)
	}
	if _, err := pgtest.Admin(t).Exec(t.Context(), `DELETE FROM `+schema+`.schema_migrations WHERE version = (SELECT max(version) FROM `+schema+`.schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := gritExec(t, dir, "tasks", "--store", readOnly); code != exitUnavailable || !strings.Contains(errOut, "older than this grit needs") || !strings.Contains(errOut, "run grit migrate") {
		t.Errorf("tasks on an older schema: exit %d, %q", code, errOut)
	}
}

// TestExitCodes: one scheme for every command: 0 success, 1 work failed,
// 2 bad input, 3 the store or server unavailable.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := migratedStore(t)
	bad := writeFile(t, "name: x\ntasks:\n  a: {run: true, timout: 5s}\n")
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"a run that succeeds", []string{"run", "-q", "--store", st, example("flaky.yaml")}, exitOK, ""},
		{"a run that fails", []string{"run", "-q", "--store", st, example("dag.yaml")}, exitFailed, ""},
		{"a bad flag", []string{"tasks", "--bogus", "--store", st}, exitUsage, "unknown flag: --bogus"},
		{"an unknown command", []string{"taks"}, exitUsage, `unknown command "taks" (did you mean task or tasks?)`},
		{"a bad file", []string{"submit", "--store", st, bad}, exitUsage, `unknown key "timout"`},
		{"a missing file", []string{"run", "--store", st, filepath.Join(dir, "none.yaml")}, exitUsage, "no such file"},
		{"a bad argument", []string{"task", "x", "--store", st}, exitUsage, "is not a task id"},
		{"a task not there", []string{"task", "999", "--store", st}, exitUsage, "no task has id 999"},
		{"a bad DSN", []string{"tasks", "--store", "mysql://x"}, exitUsage, `no driver for "mysql"`},
		{"PostgreSQL unreachable, reading", []string{"tasks", "--store", "postgres://grit@127.0.0.1:1/x"}, exitUnavailable, "127.0.0.1:1"},
		{"PostgreSQL unreachable, creating", []string{"submit", "--store", "postgres://grit@127.0.0.1:1/x", example("flaky.yaml")}, exitUnavailable, "connection refused"},
		{"a server unreachable", []string{"get", "1", "--server", "127.0.0.1:1"}, exitUnavailable, "nothing answers at 127.0.0.1:1"},
		{"enqueue to a server unreachable", []string{"enqueue", "--kind", "k", "--server", "127.0.0.1:1"}, exitUnavailable, "is a grit server running there?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, errOut := gritExec(t, dir, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.says) {
				t.Errorf("grit %v: exit %d, %q; want %d saying %q", tt.args, code, errOut, tt.code, tt.says)
			}
		})
	}
}

func TestShownDSN(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]string{
		"sqlite:grit.db":                                         "sqlite:grit.db",
		"postgres://grit@db:5432/app":                            "postgres://grit@db:5432/app",
		"postgres://grit:s3cret@db:5432/app?schema=g":            "postgres://grit:xxxxx@db:5432/app?schema=g",
		"host=db user=grit password=s3cret dbname=x":             "host=db user=grit password=xxxxx dbname=x",
		`host=db password='s3 c\'ret' dbname=x`:                  "host=db password=xxxxx dbname=x",
		"postgres://grit@db/app?password=s3cret&sslmode=require": "postgres://grit@db/app?password=xxxxx&sslmode=require",
	} {
		if got := shownDSN(dsn); got != want {
			t.Errorf("shownDSN(%q) = %q, want %q", dsn, got, want)
		}
	}
}

// TestCommandGroups: every command grit's help lists is in a group, so
// that a newcomer sees which commands open the store and which talk to a
// grit server; those that talk to one say so.
func TestCommandGroups(t *testing.T) {
	for _, cmd := range newRoot(fakeEnv(nil)).Commands() {
		if cmd.Hidden {
			continue
		}
		if cmd.GroupID == "" {
			t.Errorf("grit %s is in no group (commandGroups in root.go)", cmd.Name())
		}
		if cmd.GroupID == "server" && cmd.Name() != "server" && !strings.Contains(cmd.Short, "grit server") {
			t.Errorf("grit %s talks to a grit server, and its help (%q) does not say so", cmd.Name(), cmd.Short)
		}
	}
}
