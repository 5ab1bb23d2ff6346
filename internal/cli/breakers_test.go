package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// TestFleetBreakerStopsDispatchWithinAHeartbeat: two worker processes on
// PostgreSQL work process tasks of the group "api" and of no group. Once
// grit breakers open api returns, neither starts a task of the group after
// a heartbeat (1s) has passed, and the other tasks go on; the group's
// tasks wait with no attempt used, and finish once the breaker is closed.
func TestFleetBreakerStopsDispatchWithinAHeartbeat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	schema := pgtest.NewSchema(t)
	dsn := pgtest.WithSchema(schema)
	st := pgtest.OpenIn(t, schema)
	ctx := t.Context()
	args, _ := json.Marshal(task.Exec{Shell: "sleep 0.2"})
	var ts []task.NewTask
	for i := range 360 {
		g := "api"
		if i >= 300 {
			g = ""
		}
		ts = append(ts, task.NewTask{Kind: task.KindExec, Args: args, Group: g})
	}
	if _, err := st.Enqueue(ctx, ts); err != nil {
		t.Fatal(err)
	}
	const heartbeat = time.Second
	var workers []*fleetWorker
	for _, id := range []string{"brk-1", "brk-2"} {
		w := &fleetWorker{id: id}
		w.cmd, w.out = gritProcess(t, dir, "worker", "--store", dsn, "--worker-id", id,
			"--lease", "3s", "--heartbeat", heartbeat.String(), "--concurrency", "8")
		workers = append(workers, w)
	}
	count := func(group string, state task.State) int {
		all, err := st.ListTasks(ctx, task.Filter{States: []task.State{state}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tk := range all {
			if tk.Group == group {
				n++
			}
		}
		return n
	}
	poll.Until(t, 60*time.Second, "10 api tasks done", func() bool { return count("api", task.Success) >= 10 })
	opened, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := grit(t, "breakers", "open", "api", "--store", dsn); code != 0 || !strings.Contains(out, "breaker open") {
		t.Fatalf("breakers open: exit %d: %s %s", code, out, errOut)
	}
	poll.Until(t, 60*time.Second, "the 60 tasks of no group done", func() bool { return count("", task.Success) == 60 })
	waiting := count("api", task.Ready)
	if waiting == 0 {
		t.Fatal("every api task ran: the breaker opened too late to test anything")
	}
	late := opened.Add(heartbeat + 500*time.Millisecond)
	api, err := st.ListTasks(ctx, task.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range api {
		if tk.Group != "api" {
			continue
		}
		if tk.State == task.Ready && tk.Attempt != 0 {
			t.Errorf("task %d waits behind the breaker with %d attempts used, want 0", tk.ID, tk.Attempt)
		}
		if !tk.FirstStartedAt.IsZero() && tk.FirstStartedAt.After(late) {
			t.Errorf("task %d of the open group started at %v, %v after the breaker opened (heartbeat %v)",
				tk.ID, tk.FirstStartedAt.Format(time.TimeOnly), tk.FirstStartedAt.Sub(opened), heartbeat)
		}
	}
	if code, out, errOut := grit(t, "breakers", "--store", dsn); code != 0 || !strings.Contains(out, "api") || !strings.Contains(out, "when closed") {
		t.Errorf("breakers: exit %d: %s %s", code, out, errOut)
	}
	if code, _, errOut := grit(t, "breakers", "close", "api", "--store", dsn); code != 0 {
		t.Fatalf("breakers close: exit %d: %s", code, errOut)
	}
	poll.Until(t, 60*time.Second, "every api task done after the close", func() bool { return count("api", task.Success) == 300 })
	t.Logf("%d api tasks waited behind the open breaker", waiting)
	for _, w := range workers {
		w.cmd.Process.Signal(syscall.SIGTERM)
		waitExit(t, w.cmd, 30*time.Second, w.out)
	}
}

// TestBreakersSetAndList gives a group settings of its own and fail-fast,
// and reads them back; --workers-settings drops them.
func TestBreakersSetAndList(t *testing.T) {
	t.Parallel()
	st := migratedStore(t)
	if code, out, errOut := grit(t, "breakers", "set", "api", "--min-attempts", "5", "--cool-down", "1m", "--fail-fast", "--store", st); code != 0 ||
		!strings.Contains(out, "min-attempts 5, cool-down 1m0s, fails fast") {
		t.Fatalf("set: exit %d: %s %s", code, out, errOut)
	}
	code, out, _ := grit(t, "breakers", "--json", "--store", st)
	var rows []breakerRow
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 1 {
		t.Fatalf("list: exit %d, %v: %s", code, err, out)
	}
	if r := rows[0]; r.Group != "api" || r.State != "closed" || !r.FailFast || r.Settings == nil || r.Settings.MinAttempts != 5 || r.Settings.CoolDown != time.Minute {
		t.Errorf("listed %+v", r)
	}
	if code, out, _ := grit(t, "breakers", "set", "api", "--limit", "10", "--store", st); code != 0 || !strings.Contains(out, "limit 10 running") {
		t.Errorf("limit: exit %d: %s", code, out)
	}
	if code, out, _ := grit(t, "breakers", "set", "api", "--workers-settings", "--fail-fast=false", "--store", st); code != 0 || !strings.Contains(out, "workers'") {
		t.Errorf("back to the workers' settings: exit %d: %s", code, out)
	}
}

func TestLimitsSetAndList(t *testing.T) {
	t.Parallel()
	st := migratedStore(t)
	for _, args := range [][]string{{"queue", "mail", "5"}, {"tenant", "acme", "2"}, {"group", "api", "10"}, {"queue", "mail", "3"}} {
		if code, out, errOut := grit(t, append([]string{"limits", "set"}, append(args, "--store", st)...)...); code != 0 || !strings.Contains(out, "at most "+args[2]+" running") {
			t.Fatalf("set %v: exit %d: %s %s", args, code, out, errOut)
		}
	}
	code, out, _ := grit(t, "limits", "--json", "--store", st)
	var rows []store.Limit
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil {
		t.Fatalf("list: exit %d, %v: %s", code, err, out)
	}
	want := []store.Limit{{Scope: "queue", Name: "mail", Max: 3}, {Scope: "tenant", Name: "acme", Max: 2}, {Scope: "group", Name: "api", Max: 10}}
	if !slices.Equal(rows, want) {
		t.Errorf("listed %+v, want %+v", rows, want)
	}
	if code, out, _ := grit(t, "limits", "set", "tenant", "acme", "0", "--store", st); code != 0 || !strings.Contains(out, "tenant acme: no limit") {
		t.Errorf("remove: exit %d: %s", code, out)
	}
	if code, out, _ := grit(t, "limits", "--store", st); code != 0 || strings.Contains(out, "acme") || !strings.Contains(out, "mail") {
		t.Errorf("list after removing acme's: exit %d: %s", code, out)
	}
	for _, bad := range [][]string{{"kind", "k", "1"}, {"queue", "mail", "many"}, {"tenant", "acme", "-1"}, {"queue", "", "1"}, {"queue", "mail"}} {
		code, _, errOut := grit(t, append([]string{"limits", "set"}, append(bad, "--store", st)...)...)
		if code != 2 || errOut == "" {
			t.Errorf("set %v: exit %d (%s), want 2 with a message", bad, code, errOut)
		}
	}
}

// TestBreakersShowAnOutage: a kind held as an outage is listed with the
// failure it is held for, and closing it by hand ends the outage.
func TestBreakersShowAnOutage(t *testing.T) {
	t.Parallel()
	dsn := migratedStore(t)
	st, err := sqlite.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	_, err = st.UpdateGroup(t.Context(), "kind:sync", func(g *store.Group) {
		g.Circuit = breaker.Circuit{State: breaker.Open, Since: now, CoolDown: time.Hour, Opens: 1}
		g.Outage = &store.Outage{Fingerprint: "c45c4965b206", Error: "upstream: ledger row is locked", Kind: "sync", Since: now}
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := grit(t, "breakers", "--store", dsn)
	if code != 0 || !strings.Contains(out, "kind:sync is held as an outage since") || !strings.Contains(out, "upstream: ledger row is locked (fingerprint c45c4965b206)") {
		t.Errorf("grit breakers: exit %d:\n%s", code, out)
	}
	if code, out, _ := grit(t, "breakers", "close", "kind:sync", "--store", dsn); code != 0 || !strings.Contains(out, "closed") {
		t.Fatalf("close: exit %d: %s", code, out)
	}
	_, out, _ = grit(t, "breakers", "--json", "--store", dsn)
	var rows []breakerRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Outage != nil {
		t.Errorf("after close: %v: %s; want the outage gone", err, out)
	}
}
