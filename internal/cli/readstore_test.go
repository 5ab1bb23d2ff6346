package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/grit-run/grit/store/postgres/pgtest"
)

// TestReadStoreOnAStandby: grit status and grit tasks with --read-store read a hot standby of the store's PostgreSQL: while
// the standby receives nothing, they show what it has and not what the
// primary has since, and grit status says how far behind it is; once it
// has caught up, it says so. A --read-store that names no grit store is
// refused, saying what to check. (GRIT_READ_STORE is walked to the
// commands by TestEverySettingReachesWhatItConfigures.)
func TestReadStoreOnAStandby(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts PostgreSQL clusters of its own; runs without -short")
	}
	primary := pgtest.NewCluster(t)
	standby := primary.Standby(t, false)
	dsn, replica := primary.DSN(), standby.DSN()
	one := writeFile(t, "name: one\ntasks:\n  first: {run: \"true\"}\n")
	if code, _, errOut := grit(t, "submit", "--store", dsn, one); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	standby.CatchUp(t, primary)
	release := standby.HoldWAL(t)
	two := writeFile(t, "name: two\ntasks:\n  second: {run: \"true\"}\n")
	if code, _, errOut := grit(t, "submit", "--store", dsn, two); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}

	code, out, errOut := grit(t, "tasks", "--store", dsn, "--read-store", replica)
	if code != 0 || !strings.Contains(out, "first") || strings.Contains(out, "second") {
		t.Errorf("tasks --read-store on the held standby: exit %d, %s %s; want the first task alone", code, out, errOut)
	}
	if code, out, _ := grit(t, "tasks", "--store", dsn); code != 0 || !strings.Contains(out, "second") {
		t.Errorf("tasks on the store: exit %d, %s; want the second task too", code, out)
	}
	status := func(args ...string) statusReport {
		t.Helper()
		code, out, errOut := grit(t, append([]string{"status", "--json", "--store", dsn}, args...)...)
		var r statusReport
		if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
			t.Fatalf("status %v: exit %d, %v: %s %s", args, code, err, out, errOut)
		}
		return r
	}
	r := status("--read-store", replica)
	if rs := r.ReadStore; rs == nil || rs.Lag == nil || !rs.Lag.Standby || rs.Lag.Bytes == 0 || rs.Lag.Seconds <= 0 || rs.Error != "" {
		t.Errorf("status of the held standby: read store %+v; want a replica behind the store", rs)
	}
	if len(r.Queues) != 1 || r.Queues[0].Counts["READY"] != 1 {
		t.Errorf("status of the held standby counts %+v, want the first task alone", r.Queues)
	}
	if len(r.Store) != 0 {
		t.Errorf("status of the held standby advises %q: the store (the primary) is writable", r.Store)
	}
	if r := status(); r.ReadStore != nil || r.Queues[0].Counts["READY"] != 2 {
		t.Errorf("status without a read store: read store %+v, counts %+v", r.ReadStore, r.Queues)
	}

	release()
	standby.CatchUp(t, primary)
	code, out, errOut = grit(t, "status", "--store", dsn, "--read-store", replica)
	if code != 0 || !strings.Contains(out, "read store "+replica+": a replica, caught up with the store") {
		t.Errorf("status on the caught-up standby: exit %d:\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = grit(t, "tasks", "--store", dsn, "--read-store", replica+"&schema=nothing_here")
	if code != exitUsage || !strings.Contains(errOut, "read store: ") || !strings.Contains(errOut, "check --read-store (GRIT_READ_STORE)") {
		t.Errorf("tasks with a read store that has no grit schema: exit %d, %s; want 2, saying to check --read-store", code, errOut)
	}
}
