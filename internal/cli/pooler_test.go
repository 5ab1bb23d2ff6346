package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// TestCommandsThroughPgBouncer runs grit's processes against a PgBouncer
// in transaction mode with its default settings: two grit migrate at
// once, grit run of a task file, and a grit server whose API takes tasks
// that a grit worker runs. The server and grit run poll for work (no
// notifications through the pooler); the worker listens on a direct
// connection (--notify-store). grit status says which, and how many
// connections each process opens.
func TestCommandsThroughPgBouncer(t *testing.T) {
	t.Parallel()
	schema := pgtest.NewSchema(t)
	dsn, direct := pgtest.Bouncer(t, schema), pgtest.DSN()
	dir := t.TempDir()

	var migrations []func()
	for range 2 {
		cmd, out := gritProcess(t, dir, "migrate", "--store", dsn)
		migrations = append(migrations, func() {
			if code := waitExit(t, cmd, time.Minute, out); code != 0 {
				t.Errorf("grit migrate through PgBouncer: exit %d:\n%s", code, out)
			}
		})
	}
	for _, wait := range migrations {
		wait()
	}
	if t.Failed() {
		t.FailNow()
	}

	run, out := gritProcess(t, dir, "run", "--json", "--store", dsn, ledgerFile(t, dir, 10, "true"))
	if code := waitExit(t, run, 2*time.Minute, out); code != 0 {
		t.Fatalf("grit run through PgBouncer: exit %d:\n%s", code, out)
	}
	if s := decodeSummary(t, lastLine(out.String())); s.State != task.Success || len(s.Tasks) != 10 {
		t.Errorf("grit run through PgBouncer: %s with %d tasks, want SUCCESS with 10", s.State, len(s.Tasks))
	}

	server, sout := gritProcess(t, dir, "server", "--store", dsn, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	addr := waitServing(t, sout)
	gritProcess(t, dir, "worker", "--store", dsn, "--notify-store", direct, "--allow-exec")
	var ids []int64
	for range 10 {
		code, out, errOut := grit(t, "enqueue", "--server", addr, "--kind", "exec", "--args", `{"argv":["true"]}`)
		id, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
		if code != 0 || err != nil {
			t.Fatalf("enqueue through the server: exit %d: %s %s", code, out, errOut)
		}
		ids = append(ids, id)
	}
	st, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	poll.Until(t, time.Minute, "the worker to run the tasks enqueued through the server", func() bool {
		for _, id := range ids {
			if got, err := st.GetTask(t.Context(), id); err != nil || got.State != task.Success {
				return false
			}
		}
		return true
	})
	if code, out, errOut := grit(t, "get", strconv.FormatInt(ids[0], 10), "--server", addr); code != 0 || !strings.Contains(out, "SUCCESS") {
		t.Errorf("grit get through the server: exit %d: %s %s", code, out, errOut)
	}

	for _, c := range []struct {
		args          []string
		notifications string
		listen        int
	}{
		{[]string{"--store", dsn}, "poll", 0},
		{[]string{"--store", dsn, "--notify-store", direct}, "listen", 1},
	} {
		code, out, errOut := grit(t, append([]string{"status", "--json"}, c.args...)...)
		var r statusReport
		if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
			t.Fatalf("status %v: exit %d, %v: %s %s", c.args, code, err, out, errOut)
		}
		cs := r.Connections
		if cs == nil || !cs.Pooled || cs.Notifications != c.notifications || cs.Listen != c.listen ||
			cs.Worker != cs.Pool+postgres.DefaultHeartbeatConns+c.listen || cs.Dashboard != cs.Pool {
			t.Errorf("status %v: connections %+v; want pooled, notifications %s, %d listening", c.args, cs, c.notifications, c.listen)
		}
		if len(r.Workers) == 0 {
			t.Errorf("status %v: no workers, want grit run's and grit worker's", c.args)
		}
	}
	if code, out, _ := grit(t, "status", "--store", dsn); code != 0 || !strings.Contains(out, "workers and servers poll every 1s") {
		t.Errorf("status without --notify-store: exit %d:\n%s\nwant it to say workers poll every 1s", code, out)
	}
	server.Process.Kill()
}

// TestWorkerConnectionsStayWithinStatus: a grit worker given a pool of one
// connection and a heartbeats' pool of one opens, while it works a run,
// no more connections than grit status says a worker opens with those
// settings (3: its watchers share one listening connection).
func TestWorkerConnectionsStayWithinStatus(t *testing.T) {
	t.Parallel()
	schema := pgtest.NewSchema(t)
	app := "grit_test_" + schema[len("grit_test_"):]
	dsn := pgtest.WithSchema(schema) + "&pool_max_conns=1&heartbeat_conns=1&application_name=" + app
	dir := t.TempDir()
	if code, _, errOut := grit(t, "submit", "--store", dsn, ledgerFile(t, dir, 30, "true")); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	code, out, errOut := grit(t, "status", "--json", "--store", dsn)
	var r statusReport
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Connections == nil {
		t.Fatalf("status: exit %d, %v: %s %s", code, err, out, errOut)
	}
	if r.Connections.Worker != 3 {
		t.Fatalf("status says a worker opens %d connections with pool_max_conns=1&heartbeat_conns=1, want 3 (1 + 1 + 1 listening)", r.Connections.Worker)
	}
	worker, wout := gritProcess(t, dir, "worker", "--store", dsn)
	waitSaid(t, wout, `(worker started)`, "the worker did not start")
	st, err := postgres.Open(t.Context(), pgtest.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	most := 0
	poll.Until(t, time.Minute, "the worker to run the run", func() bool {
		var n int
		if err := pgtest.Admin(t).QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		most = max(most, n)
		ts, err := st.ListTasks(t.Context(), task.Filter{})
		return err == nil && countState(ts, task.Success) == 30
	})
	if most > r.Connections.Worker || most == 0 {
		t.Errorf("the worker had up to %d connections open, want 1 to %d, as grit status says", most, r.Connections.Worker)
	}
	worker.Process.Kill()
}

// lastLine is the last non-empty line of a process's output.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestNotifyStoreNeedsPostgres: --notify-store with an SQLite store is a
// usage error that says what the flag is for.
func TestNotifyStoreNeedsPostgres(t *testing.T) {
	t.Parallel()
	code, _, errOut := grit(t, "status", "--store", migratedStore(t), "--notify-store", "postgres://grit@db:5432/app")
	if code != exitUsage || !strings.Contains(errOut, "it is for a postgres:// --store behind a connection pooler") {
		t.Errorf("status --notify-store on SQLite: exit %d: %s; want 2, saying what --notify-store is for", code, errOut)
	}
}
