package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/internal/gritbench"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store/postgres/pgtest"
)

// grit runs the command line in-process and returns its exit code and
// output.
func grit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := Main(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func tempStore(t *testing.T) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "grit.db")
}

// migratedStore is a new store made by grit migrate, for the commands
// that open only a store that is there.
func migratedStore(t *testing.T) string {
	t.Helper()
	st := tempStore(t)
	if code, _, errOut := grit(t, "migrate", "--store", st); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, errOut)
	}
	return st
}

// example is the path of a file in examples/, absolute so that grit run
// in another directory finds it.
func example(name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		panic(err)
	}
	return p
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tasks.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func decodeSummary(t *testing.T, out string) runSummary {
	t.Helper()
	var s runSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("output is not one JSON summary: %v\n%s", err, out)
	}
	return s
}

func byName(s runSummary) map[string]taskJSON {
	m := map[string]taskJSON{}
	for _, t := range s.Tasks {
		m[t.Name] = t
	}
	return m
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	bad := writeFile(t, "name: x\ntasks:\n  a:\n    run: true\n    timout: 5s\n")
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"no file", []string{"run"}, "give a task file or --resume"},
		{"both", []string{"run", "f.yaml", "--resume", "1"}, "not both"},
		{"missing file", []string{"run", "/nonexistent/tasks.yaml"}, "no such file"},
		{"bad key", []string{"run", bad}, `tasks.yaml:5: unknown key "timout" (did you mean "timeout"?)`},
		{"bad flag", []string{"run", "--json=maybe", bad}, "invalid argument"},
		{"bad concurrency", []string{"run", "--concurrency", "x", example("flaky.yaml")}, `concurrency "x" (flag --concurrency): want a positive number`},
		{"negative concurrency", []string{"run", "--concurrency", "-1", example("flaky.yaml")}, "want a positive number"},
		{"bad lease", []string{"run", "--lease", "soon", example("flaky.yaml")}, `lease "soon" (flag --lease): want a positive duration`},
		{"heartbeat past lease", []string{"run", "--lease", "1s", "--heartbeat", "2s", example("flaky.yaml")}, "must be shorter than the lease"},
		{"bad store", []string{"run", "--store", "mysql://x", example("flaky.yaml")}, `no driver for "mysql"`},
		{"bad task id", []string{"task", "abc"}, "is not a task id"},
		{"bad state", []string{"tasks", "--state", "DONE"}, "--state DONE: not a state"},
		{"bench workers", []string{"bench", "--workers", "0"}, "bench: --workers [0]: want counts from 1 to 64"},
		{"bench tasks", []string{"bench", "--tasks", "-5"}, "bench: --tasks -5: want a positive number"},
		{"bench heartbeat", []string{"bench", "--lease", "1s", "--heartbeat", "1s"}, "heartbeat 1s (flag --heartbeat) must be shorter than the lease 1s (flag --lease)"},
		{"breakers open without a group", []string{"breakers", "open"}, "accepts 1 arg(s), received 0"},
		{"breakers open negative", []string{"breakers", "open", "api", "--for", "-1s"}, "--for -1s: want a positive duration"},
		{"breakers set ratio", []string{"breakers", "set", "api", "--failure-ratio", "2"}, "failure ratio 2: want a number from 0 to 1"},
		{"breakers set cool-downs", []string{"breakers", "set", "api", "--cool-down", "1h", "--max-cool-down", "10m"}, "max cool-down 10m0s is shorter than the cool-down 1h0m0s"},
		{"sim strategy", []string{"sim", "herd", "--strategies", "full,fuzzy"}, `unknown strategy "fuzzy"`},
		{"sim plot", []string{"sim", "herd", "--plot", "herd.gif"}, "--plot herd.gif: want a .png or .svg file"},
		{"sim clients", []string{"sim", "herd", "--clients", "-3"}, "-3 clients: want 1 to 10,000,000"},
		{"sim backoff", []string{"sim", "herd", "--min", "1m", "--max", "1s"}, "backoff cap 1s below its first delay 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := grit(t, append(tt.args, "--store", tempStore(t))...)
			if tt.name == "bad store" {
				code, _, errOut = grit(t, tt.args...)
			}
			if code != exitUsage {
				t.Errorf("exit %d, want 2; stderr %q", code, errOut)
			}
			if !strings.Contains(errOut, tt.says) {
				t.Errorf("stderr %q does not say %q", errOut, tt.says)
			}
		})
	}
}

func TestRunExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		code     int
		state    string
		tasks    map[string]string
		attempts map[string]int
	}{
		{"settlement.yaml", 0, "SUCCESS",
			map[string]string{"fetch": "SUCCESS", "settle-m1": "SUCCESS", "settle-m2": "SUCCESS", "settle-m3": "SUCCESS", "report": "SUCCESS"},
			map[string]int{"fetch": 3, "report": 1}},
		{"flaky.yaml", 0, "SUCCESS", map[string]string{"call-api": "SUCCESS"}, map[string]int{"call-api": 3}},
		{"poison.yaml", 1, "DEAD_LETTER",
			map[string]string{"settle-m41": "SUCCESS", "settle-m42": "DEAD_LETTER", "settle-m43": "SUCCESS", "report": "PENDING"},
			map[string]int{"settle-m42": 2, "report": 0}},
		{"hung.yaml", 1, "FAILED", map[string]string{"hang": "FAILED", "sibling": "SUCCESS"}, map[string]int{"hang": 2}},
		{"dag.yaml", 1, "FAILED",
			map[string]string{"extract": "SUCCESS", "transform": "FAILED", "load": "UPSTREAM_FAILED", "publish": "UPSTREAM_FAILED", "audit": "SUCCESS"},
			map[string]int{"transform": 1, "load": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := grit(t, "run", "--json", "--store", tempStore(t), example(tt.file))
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.code, errOut)
			}
			s := decodeSummary(t, out)
			if string(s.State) != tt.state {
				t.Errorf("run %s, want %s", s.State, tt.state)
			}
			got := byName(s)
			for name, state := range tt.tasks {
				if string(got[name].State) != state {
					t.Errorf("%s: %s, want %s (%s)", name, got[name].State, state, got[name].Error)
				}
			}
			for name, n := range tt.attempts {
				if got[name].Attempt != n {
					t.Errorf("%s: %d attempts, want %d", name, got[name].Attempt, n)
				}
			}
		})
	}
}

func TestHungTaskIsCutOff(t *testing.T) {
	t.Parallel()
	code, out, _ := grit(t, "run", "--json", "--store", tempStore(t), example("hung.yaml"))
	s := decodeSummary(t, out)
	hang := byName(s)["hang"]
	if code != 1 || !strings.Contains(hang.Error, "timed out after 1s: killed by SIGKILL") {
		t.Errorf("exit %d, hang: %+v", code, hang)
	}
}

// TestDeadLetterOperatorFlow dead-letters a task, lists it, skips it, and
// resumes the run, whose dependent then goes on.
func TestDeadLetterOperatorFlow(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	_, out, _ := grit(t, "run", "--json", "--store", st, example("poison.yaml"))
	s := decodeSummary(t, out)
	dead := byName(s)["settle-m42"]
	if got := s.WaitingOn["report"]; len(got) != 1 || got[0] != "settle-m42" {
		t.Errorf("report waits on %v, want [settle-m42]", got)
	}

	code, out, _ := grit(t, "dlq", "list", "--json", "--store", st)
	var groups []dlqGroup
	if err := json.Unmarshal([]byte(out), &groups); err != nil || code != 0 {
		t.Fatalf("dlq list: exit %d, %v: %s", code, err, out)
	}
	if len(groups) != 1 || groups[0].Count != 1 || groups[0].Fingerprint != dead.Fingerprint || groups[0].Tasks[0].ID != dead.ID {
		t.Fatalf("dlq groups %+v", groups)
	}

	id := itoa(dead.ID)
	if code, _, errOut := grit(t, "dlq", "replay", "999999", "--store", st); code != 2 || !strings.Contains(errOut, "no task has id 999999") {
		t.Errorf("replay of an unknown task: exit %d, %q", code, errOut)
	}
	if code, out, _ := grit(t, "dlq", "skip", id, "--store", st); code != 0 || !strings.Contains(out, "SKIPPED") {
		t.Fatalf("skip: exit %d, %q", code, out)
	}
	if code, _, errOut := grit(t, "dlq", "fail", id, "--store", st); code != 2 || !strings.Contains(errOut, "fail needs a DEAD_LETTER task; it is SKIPPED") {
		t.Errorf("fail of a skipped task: exit %d, %q", code, errOut)
	}
	code, out, _ = grit(t, "run", "--json", "--store", st, "--resume", itoa(s.Run))
	s = decodeSummary(t, out)
	if code != 0 || s.State != "SUCCESS" || byName(s)["report"].State != "SUCCESS" || byName(s)["settle-m42"].State != "SKIPPED" {
		t.Errorf("after skip: exit %d, %+v", code, s)
	}
}

func TestTasksAndTaskShowHistory(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	_, out, _ := grit(t, "run", "--json", "--store", st, example("flaky.yaml"))
	s := decodeSummary(t, out)
	id := byName(s)["call-api"].ID

	code, out, _ := grit(t, "tasks", "--run", itoa(s.Run), "--state", "success", "--store", st)
	if code != 0 || !strings.Contains(out, "call-api") || !strings.Contains(out, "SUCCESS") {
		t.Errorf("tasks: exit %d\n%s", code, out)
	}
	code, out, _ = grit(t, "task", itoa(id), "--json", "--store", st)
	var detail struct {
		Task     struct{ State string }
		Attempts []struct {
			Number   int
			Outcome  string
			ExitCode *int `json:"exit_code"`
			Decision string
		}
	}
	if err := json.Unmarshal([]byte(out), &detail); err != nil || code != 0 {
		t.Fatalf("task --json: exit %d, %v: %s", code, err, out)
	}
	if len(detail.Attempts) != 3 || detail.Attempts[0].Decision != "retry" || *detail.Attempts[0].ExitCode != 75 || detail.Attempts[2].Outcome != "SUCCESS" {
		t.Errorf("history %+v", detail.Attempts)
	}
	code, out, _ = grit(t, "task", itoa(id), "--store", st)
	if code != 0 || !strings.Contains(out, "upstream answered 503") || !strings.Contains(out, "ok on attempt 3") {
		t.Errorf("task: exit %d\n%s", code, out)
	}
	if code, _, errOut := grit(t, "task", "424242", "--store", st); code != 2 || !strings.Contains(errOut, "no task has id 424242") {
		t.Errorf("unknown task: exit %d, %q", code, errOut)
	}
}

func TestRunningAFileAgainStartsANewRunOnceEnded(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	_, out1, _ := grit(t, "run", "--json", "--store", st, example("flaky.yaml"))
	_, out2, _ := grit(t, "run", "--json", "--store", st, example("flaky.yaml"))
	if a, b := decodeSummary(t, out1).Run, decodeSummary(t, out2).Run; a == b {
		t.Errorf("both runs have id %d", a)
	}
}

func TestTransitionLines(t *testing.T) {
	t.Parallel()
	code, out, _ := grit(t, "run", "--store", tempStore(t), example("flaky.yaml"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	// RETRYING shows next= only when the jittered delay is not about zero.
	for _, want := range []string{"call-api RUNNING attempt=1", "call-api RETRYING attempt=1", "exit=75", "call-api SUCCESS attempt=3", "run 1 (flaky): SUCCESS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestMaxFailuresEndsTheRun(t *testing.T) {
	t.Parallel()
	// f1 and f2 fail while gate runs: the run fails on the second failure,
	// so later, which waits for gate, is cancelled; gate itself finishes.
	file := writeFile(t, `name: limited
max_failures: 1
defaults: {permanent_on_exit: [2]}
tasks:
  f1: {run: exit 2}
  f2: {run: exit 2}
  gate: {run: sleep 1}
  later: {run: "true", needs: gate}
`)
	code, out, _ := grit(t, "run", "--json", "--concurrency", "3", "--store", tempStore(t), file)
	s := decodeSummary(t, out)
	got := byName(s)
	if code != 1 || s.State != "FAILED" || got["f1"].State != "FAILED" || got["f2"].State != "FAILED" ||
		got["gate"].State != "SUCCESS" || got["later"].State != "CANCELLED" {
		t.Errorf("exit %d, %+v", code, s)
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	for range 2 {
		if code, out, errOut := grit(t, "migrate", "--store", st); code != 0 || !strings.Contains(out, "schema up to date") {
			t.Fatalf("migrate: exit %d, %q %q", code, out, errOut)
		}
	}
}

// TestBenchOnPostgresUsesThrowawaySchemas runs a small grit bench on
// PostgreSQL: it reports every figure and leaves no schema behind.
func TestBenchOnPostgresUsesThrowawaySchemas(t *testing.T) {
	t.Parallel()
	db := pgtest.Admin(t)
	code, out, errOut := grit(t, "bench", "--json", "--store", pgtest.DSN(), "--tasks", "300", "--retries", "20", "--procs", "3",
		"--workers", "1,2", "--latency", "20", "--lease", "1s", "--memory-tasks", "500", "--api-tasks", "300", "--remote-workers", "2", "--remote-claim", "50", "--isolated", "100", "--isolated-concurrency", "4")
	var r gritbench.Result
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("bench: exit %d, %v: %s %s", code, err, out, errOut)
	}
	if r.WorkPerSec <= 0 || r.EnqueuePerSec <= 0 || r.ExecTaskMS <= 0 || len(r.WorkProcs) != 2 || r.StartP99 <= 0 ||
		r.TakeoverS <= 0 || len(r.MemoryMiB) != 10 || r.IsolatedTasks != 100 || r.IsolatedPerSec <= 0 {
		t.Errorf("result %+v", r)
	}
	if w := r.RemoteWork; w.RemoteWorkers != 2 || w.RemoteTasks != 300 || w.RemoteBatchedPerSec <= 0 || w.RemoteSinglePerSec <= 0 ||
		w.RemoteBatchedVsGo != w.RemoteBatchedPerSec/r.WorkPerSec || w.RemoteClaimMean < 1 || w.RemoteClaimMean > 50 {
		t.Errorf("remote work %+v", w)
	}
	var left int
	prefix := fmt.Sprintf("grit_bench_%d_%%", os.Getpid())
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM pg_namespace WHERE nspname LIKE $1`, prefix).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d benchmark schemas left behind (%v)", left, err)
	}
}

// TestBenchInterruptedDropsItsSchemas: SIGINT in the middle of grit bench on
// PostgreSQL ends it with its worker processes, and leaves no schema
// behind.
func TestBenchInterruptedDropsItsSchemas(t *testing.T) {
	t.Parallel()
	db := pgtest.Admin(t)
	cmd, out := gritProcess(t, t.TempDir(), "bench", "--store", pgtest.DSN(), "--tasks", "2000000", "--workers", "2", "--isolated", "0")
	prefix := fmt.Sprintf("grit_bench_%d_%%", cmd.Process.Pid)
	schemas := func() int {
		var n int
		if err := db.QueryRow(t.Context(), `SELECT count(*) FROM pg_namespace WHERE nspname LIKE $1`, prefix).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Cleanup(func() { // should the test fail, leave nothing either
		rows, err := db.Query(context.Background(), `SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`, prefix)
		if err != nil {
			return
		}
		names, _ := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, n := range names {
			db.Exec(context.Background(), `DROP SCHEMA `+n+` CASCADE`)
		}
	})
	poll.Until(t, 60*time.Second, "a benchmark schema", func() bool { return schemas() > 0 })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, 60*time.Second, out); code == 0 {
		t.Errorf("an interrupted bench exited 0:\n%s", out)
	}
	if n := schemas(); n != 0 {
		t.Errorf("%d benchmark schemas left behind:\n%s", n, out)
	}
}

// TestSimHerd runs grit sim herd small: one JSON object per strategy with
// the documented fields, and a plot that is a PNG.
func TestSimHerd(t *testing.T) {
	t.Parallel()
	plot := filepath.Join(t.TempDir(), "herd.png")
	code, out, errOut := grit(t, "sim", "herd", "--json", "--clients", "500", "--capacity", "50", "--down", "10s", "--plot", plot)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rs []map[string]any
	if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 12 {
		t.Fatalf("%v, %d strategies, want an array of one object per strategy (12):\n%s", err, len(rs), out)
	}
	for _, r := range rs {
		for _, k := range []string{"strategy", "peak_multiple", "drain_s", "attempts", "down_attempts", "dead_lettered", "held"} {
			if _, ok := r[k]; !ok {
				t.Errorf("%v has no %s", r, k)
			}
		}
	}
	b, err := os.ReadFile(plot)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("plot: %v, starts %q", err, b[:min(len(b), 8)])
	}
	// The same seed gives the same table.
	if _, again, _ := grit(t, "sim", "herd", "--json", "--clients", "500", "--capacity", "50", "--down", "10s"); again != out {
		t.Errorf("two runs with the default seed differ")
	}
}

func TestBenchAPIFlagsAreChecked(t *testing.T) {
	t.Parallel()
	for _, bad := range [][]string{{"--api-batch", "0"}, {"--api-batch", "1001"}, {"--api-tasks", "-1"}, {"--api-callers", "0"},
		{"--remote-workers", "-1"}, {"--remote-workers", "65"}, {"--remote-claim", "0"}, {"--remote-claim", "1001"}, {"--isolated", "-1"}, {"--isolated-concurrency", "0"}, {"--isolated-concurrency", "1025"}} {
		code, _, errOut := grit(t, append([]string{"bench", "--store", tempStore(t)}, bad...)...)
		if code != 2 || !strings.Contains(errOut, strings.TrimPrefix(bad[0], "--")) {
			t.Errorf("bench %v: exit %d: %s, want 2 naming the flag", bad, code, errOut)
		}
	}
}

// TestRunWorksOnlyItsOwnRun: grit run on a store it shares leaves the other
// runs' tasks to workers; it does not run them on this machine.
func TestRunWorksOnlyItsOwnRun(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	marker := filepath.Join(t.TempDir(), "ran")
	other := writeFile(t, "name: other\ntasks:\n  mark: {run: touch "+marker+"}\n")
	code, out, errOut := grit(t, "submit", "--json", "--store", st, other)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	var submitted struct{ Run int64 }
	if err := json.Unmarshal([]byte(out), &submitted); err != nil || submitted.Run == 0 {
		t.Fatalf("submit printed %q (%v)", out, err)
	}
	mine := writeFile(t, "name: mine\ntasks:\n  a: {run: \"true\"}\n  b: {run: \"true\", needs: a}\n")
	code, out, errOut = grit(t, "run", "--json", "--store", st, mine)
	if s := decodeSummary(t, out); code != 0 || s.State != "SUCCESS" || s.Run == submitted.Run {
		t.Fatalf("grit run: exit %d, %+v: %s", code, s, errOut)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("grit run ran run %d's task (%v)", submitted.Run, err)
	}
	code, out, _ = grit(t, "tasks", "--json", "--run", itoa(submitted.Run), "--store", st)
	if code != 0 || !strings.Contains(out, `"READY"`) {
		t.Errorf("run %d's task after grit run of another: exit %d, %s; want it READY", submitted.Run, code, out)
	}
}

// TestBenchPrintsRemoteWork: grit bench's text gives the remote workers'
// figures as measured, each mode with its ratio to the in-process engine.
func TestBenchPrintsRemoteWork(t *testing.T) {
	t.Parallel()
	r := gritbench.Result{WorkPerSec: 8000, RemoteWork: gritbench.RemoteWork{RemoteWorkers: 4, RemoteTasks: 20000, RemoteClaim: 100,
		RemoteClaimMean: 97, RemoteBatchedPerSec: 5200, RemoteSinglePerSec: 1040}}
	r.RemoteBatchedVsGo, r.RemoteSingleVsGo = r.RemoteBatchedPerSec/r.WorkPerSec, r.RemoteSinglePerSec/r.WorkPerSec
	r.RemoteBatchedVsSingle = r.RemoteBatchedPerSec / r.RemoteSinglePerSec
	var b strings.Builder
	printBench(&b, r)
	for _, want := range []string{
		"work via API            5200 tasks/s, 4 remote workers, one Report per claim (97 tasks each): 0.65× in this process",
		"1040 tasks/s with one Complete call per task: 0.13× in this process; batched 5.0× single",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("grit bench printed\n%s\nwithout %q", b.String(), want)
		}
	}
	b.Reset()
	printBench(&b, gritbench.Result{})
	if strings.Contains(b.String(), "work via API") {
		t.Errorf("a bench without remote workers printed their line:\n%s", b.String())
	}
}

// TestBenchIsolated: grit bench measures isolated handlers with children
// started as its hidden child command, and prints their line.
func TestBenchIsolated(t *testing.T) {
	t.Parallel()
	code, out, errOut := grit(t, "bench", "--tasks", "100", "--concurrency", "4", "--workers", "1", "--latency", "5", "--retries", "5",
		"--procs", "1", "--takeover=false", "--api-tasks", "0", "--remote-workers", "0", "--isolated", "100")
	if code != 0 || !strings.Contains(out, "isolated handlers") || !strings.Contains(out, "µs a no-op attempt over in-process") {
		t.Fatalf("bench: exit %d:\n%s\n%s", code, out, errOut)
	}
	t.Log(out)
}

// TestBenchChildRefusesByHand: the children's command says what it is
// when it is run outside a child.
func TestBenchChildRefusesByHand(t *testing.T) {
	t.Parallel()
	code, _, errOut := grit(t, benchChildCmd)
	if code != 2 || !strings.Contains(errOut, "grit bench starts") {
		t.Errorf("%s by hand: exit %d: %s", benchChildCmd, code, errOut)
	}
}

// TestBenchPrintsIsolated: the isolated handlers' line gives both
// throughputs and the time an isolated attempt adds.
func TestBenchPrintsIsolated(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printBench(&b, gritbench.Result{IsolatedWork: gritbench.IsolatedWork{IsolatedTasks: 3000, IsolatedPerSec: 1500, IsolatedInProcPerSec: 2000, IsolatedAddedUS: 166.7, IsolatedChildren: 256}})
	want := "isolated handlers       1500 tasks/s, +167 µs a no-op attempt over in-process (2000 tasks/s; 3000 tasks each, 256 warm children)"
	if !strings.Contains(b.String(), want) {
		t.Errorf("grit bench printed\n%s\nwithout %q", b.String(), want)
	}
}

// TestBenchOnAGivenSQLiteFile: grit bench --store sqlite:PATH measures
// each step on a fresh file of its own beside PATH, and leaves nothing
// there; on one file for every step, the worker processes' step counted
// the tasks of the steps before it and failed.
func TestBenchOnAGivenSQLiteFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := grit(t, "bench", "--store", "sqlite:"+filepath.Join(dir, "given.db"), "--tasks", "200", "--workers", "1", "--procs", "1",
		"--latency", "5", "--retries", "5", "--takeover=false", "--api-tasks", "0", "--remote-workers", "0", "--isolated", "0")
	if code != 0 || !strings.Contains(out, "with 1 worker processes") {
		t.Fatalf("bench: exit %d:\n%s\n%s", code, out, errOut)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("bench left %v beside the given file", left)
	}
}
