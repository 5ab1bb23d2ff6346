package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/task"
)

// TestCheckTask: a task is clean when every attempt but its one success
// was interrupted by a fault on its worker or the database, and every
// body the ledger saw ran under a lease the store recorded.
func TestCheckTask(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	r := &run{cfg: Config{Lease: 3 * time.Second}, faults: []fault{
		{Kind: "kill", Worker: "w1", At: t0.Add(2 * time.Second), End: t0.Add(2 * time.Second)},
		{Kind: "pg-restart", At: t0.Add(20 * time.Second), End: t0.Add(22 * time.Second)},
	}}
	ok := task.Task{ID: 1, State: task.Success}
	interrupted := task.Attempt{Number: 1, Worker: "w1", LeaseToken: 10, StartedAt: t0, EndedAt: t0.Add(4 * time.Second), Outcome: task.OutcomeInterrupted}
	success := task.Attempt{Number: 2, Worker: "w2", LeaseToken: 11, StartedAt: t0.Add(5 * time.Second), EndedAt: t0.Add(6 * time.Second), Outcome: task.OutcomeSuccess}
	unexplained := task.Attempt{Number: 1, Worker: "w2", LeaseToken: 12, StartedAt: t0.Add(8 * time.Second), EndedAt: t0.Add(9 * time.Second), Outcome: task.OutcomeError}
	duringRestart := task.Attempt{Number: 1, Worker: "w3", LeaseToken: 13, StartedAt: t0.Add(19 * time.Second), EndedAt: t0.Add(21 * time.Second), Outcome: task.OutcomeError}
	ended := func(toks ...int64) map[int64]*bodyRun {
		m := map[int64]*bodyRun{}
		for _, tok := range toks {
			m[tok] = &bodyRun{ended: true}
		}
		return m
	}
	for _, c := range []struct {
		name string
		t    task.Task
		as   []task.Attempt
		runs map[int64]*bodyRun
		want string // a violation's words; "" for none
	}{
		{"interrupted by a kill, then succeeded", ok, []task.Attempt{interrupted, success}, ended(10, 11), ""},
		{"failed during a database restart", ok, []task.Attempt{duringRestart, success}, ended(11), ""},
		{"failed with no fault", ok, []task.Attempt{unexplained, success}, ended(11), "no fault explains it"},
		{"two successes", ok, []task.Attempt{success, success}, ended(11), "2 successful attempts"},
		{"not final", task.Task{ID: 1, State: task.Running}, nil, nil, "RUNNING with 0"},
		{"success without its end", ok, []task.Attempt{success}, map[int64]*bodyRun{11: {}}, "no end in the ledger"},
		{"a body under an unknown lease", ok, []task.Attempt{success}, ended(11, 99), "lease 99"},
	} {
		rep := &Report{}
		r.checkTask(rep, c.t, c.as, c.runs)
		got := strings.Join(rep.Violations, "; ")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: violations %q, want %q", c.name, got, c.want)
		}
	}
}

// TestReadLedger: lines cut by a kill are skipped; a body's end is seen.
func TestReadLedger(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "ledger")
	os.WriteFile(p, []byte("1 1 10 start\n1 1 10 end\n2 1 11 start\n2 1 1\n3 2 12 start\n"), 0o644)
	l, err := readLedger(p)
	if err != nil {
		t.Fatal(err)
	}
	if !l[1][10].ended || l[2][11].ended || l[3][12] == nil || len(l[2]) != 1 {
		t.Errorf("ledger %v", l)
	}
}

// TestConfigNeedsAStore: a run with no store says what to give.
func TestConfigNeedsAStore(t *testing.T) {
	t.Parallel()
	if err := (&Config{For: time.Minute}).validate(); err == nil || !strings.Contains(err.Error(), "--store postgres://") {
		t.Errorf("validate: %v, want it to ask for a PostgreSQL --store", err)
	}
}
