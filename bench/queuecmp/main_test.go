package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgresDSN returns the test database, skipping the test loudly when it
// does not answer, or failing it under CI.
func postgresDSN(t *testing.T) string {
	t.Helper()
	dsn := envDSN()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		conn.Close(ctx)
		return dsn
	}
	where := dsn
	if u, perr := url.Parse(dsn); perr == nil {
		where = u.Redacted()
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("PostgreSQL at %s does not answer, and CI=true requires it: %v (set GRIT_TEST_POSTGRES to the test database)", where, err)
	}
	t.Skipf("SKIPPED, NOT PASSED: PostgreSQL at %s does not answer (%v); start it or set GRIT_TEST_POSTGRES", where, err)
	return ""
}

// TestRunAllSystems runs the whole program, small, on every system and
// checks that each reports a complete result. It says nothing about speed.
func TestRunAllSystems(t *testing.T) {
	dsn := postgresDSN(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the SQLite files go
	const jobs, rounds = 200, 2
	rep := runSmall(t, []string{"--db", dsn}, jobs, rounds)
	local := localServer(t, dsn)
	var names []string
	for _, s := range rep.Systems {
		names = append(names, s.System)
		sys, _ := systemNamed(s.System)
		checkCPU(t, s, local && sys.store == onPostgres)
	}
	if !slices.Equal(names, systemNames()) {
		t.Errorf("systems %v, want %v", names, systemNames())
	}
	// grit and grit-defaults against River's two and pg-limit,
	// grit-features against grit; grit-sqlite against river-sqlite and
	// sqlite-limit; grit-tenants and grit-sqlite-tenants against grit and
	// grit-sqlite.
	checkRatios(t, rep.Ratios, rounds, 2*3+1+1*2+2)
	if rep.Machine.NumCPU <= 0 || rep.Machine.PostgresVersion == "" || rep.Machine.Fsync == "" || rep.Machine.SynchronousCommit == "" || rep.Machine.Autovacuum == "" {
		t.Errorf("machine incomplete: %+v", rep.Machine)
	}
	checkSQLiteMachine(t, rep.Machine)
	checkSchemasDropped(t, dsn)
	checkEmpty(t, tmp)
}

// TestRunSQLiteWithoutServer runs the SQLite systems, small, with no
// PostgreSQL at --db: they need none.
func TestRunSQLiteWithoutServer(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	const jobs, rounds = 300, 2
	rep := runSmall(t, []string{"--db", "postgres://nobody@127.0.0.1:1/none", "--systems", "grit-sqlite,river-sqlite,sqlite-limit"}, jobs, rounds)
	for _, s := range rep.Systems {
		checkCPU(t, s, false)
	}
	checkRatios(t, rep.Ratios, rounds, 2)
	if rep.Machine.PostgresVersion != "" {
		t.Errorf("a run on SQLite alone read PostgreSQL: %+v", rep.Machine)
	}
	checkSQLiteMachine(t, rep.Machine)
	checkEmpty(t, tmp)
}

// runSmall runs the program, small, with args and --json, and checks that
// each system reports a complete result and a CPU profile.
func runSmall(t *testing.T, args []string, jobs, rounds int) report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	const latencyJobs, retryJobs = 50, 20
	var stdout, stderr bytes.Buffer
	prof := filepath.Join(t.TempDir(), "cpu")
	code := run(ctx, append(args, "--json",
		"--jobs", fmt.Sprint(jobs), "--rounds", fmt.Sprint(rounds), "--latency-jobs", fmt.Sprint(latencyJobs), "--retry-jobs", fmt.Sprint(retryJobs),
		"--cpuprofile", prof,
	), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr.String())
	}
	var rep report
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("output is not one JSON report: %v\n%s", err, stdout.String())
	}
	for _, s := range rep.Systems {
		checkResult(t, s, jobs, rounds, latencyJobs, retryJobs)
		checkProfile(t, prof+"."+s.System)
	}
	return rep
}

func checkSQLiteMachine(t *testing.T, m machine) {
	t.Helper()
	if m.SQLiteVersion == "" || m.SQLiteSettings != sqliteSettings || m.SQLiteFS == "" {
		t.Errorf("machine says too little of SQLite: %+v", m)
	}
}

// checkEmpty checks that the run removed its folder of SQLite files.
func checkEmpty(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind in the temporary folder: %s", e.Name())
	}
}

func checkResult(t *testing.T, s result, jobs, rounds, latencyJobs, retryJobs int) {
	t.Helper()
	tp := s.Throughput
	if len(tp.Rounds) != rounds || !slices.Contains(tp.Rounds, tp.JobsPerSec) {
		t.Errorf("%s: rounds %v with %v jobs/s reported; want %d rounds, the reported one among them", s.System, tp.Rounds, tp.JobsPerSec, rounds)
	}
	if tp.Jobs != jobs || tp.Ran < jobs || tp.Completed != jobs || tp.Seconds <= 0 || tp.JobsPerSec <= 0 {
		t.Errorf("%s throughput incomplete: %+v (want %d jobs run and completed)", s.System, tp, jobs)
	}
	if tp.FirstJobMs <= 0 || tp.FirstJobMs > tp.Seconds*1000 {
		t.Errorf("%s: first job %.3f ms after the start, in a run of %.3f s; want within the run", s.System, tp.FirstJobMs, tp.Seconds)
	}
	for _, d := range []struct {
		name string
		got  dist
		want int
	}{{"enqueue→start", s.Latency, latencyJobs}, {"retry lateness", s.Retry, retryJobs}} {
		if d.got.Samples != d.want {
			t.Errorf("%s %s: %d samples, want %d", s.System, d.name, d.got.Samples, d.want)
		}
		if !(d.got.P50 <= d.got.P90 && d.got.P90 <= d.got.P99 && d.got.P99 <= d.got.Max) {
			t.Errorf("%s %s: quantiles out of order: %+v", s.System, d.name, d.got)
		}
	}
	if s.Config == "" {
		t.Errorf("%s has no config description", s.System)
	}
}

// localServer tells whether the server at dsn runs on this machine, where
// its CPU is read.
func localServer(t *testing.T, dsn string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	return findServer(ctx, pool) != 0
}

// checkCPU checks the CPU figures; server says the system's database
// server runs on this machine (PostgreSQL), where its CPU is read.
func checkCPU(t *testing.T, s result, server bool) {
	t.Helper()
	tp := s.Throughput
	if tp.ProcessCPUPerJob <= 0 {
		t.Errorf("%s: process CPU per job %v, want more than 0", s.System, tp.ProcessCPUPerJob)
	}
	// The server's CPU is counted in ticks of 10ms, which a short run may
	// not reach: it is there, not necessarily above 0.
	if server != (tp.ServerCPUPerJob != nil) || server != (tp.CPUBusy != nil) {
		t.Errorf("%s: server CPU read %v, but server CPU %v and busy %v", s.System, server, tp.ServerCPUPerJob, tp.CPUBusy)
	}
	if tp.ServerCPUPerJob != nil && (*tp.ServerCPUPerJob < 0 || *tp.CPUBusy < 0) {
		t.Errorf("%s: negative CPU: server %v, busy %v", s.System, *tp.ServerCPUPerJob, *tp.CPUBusy)
	}
}

// checkRatios checks that there are want ratios, each complete and each
// between two systems on the same store.
func checkRatios(t *testing.T, rs []ratio, rounds, want int) {
	t.Helper()
	if len(rs) != want {
		t.Fatalf("%d ratios, want %d, one per grit system and other system on its store (or each it is versus): %+v", len(rs), want, rs)
	}
	for _, r := range rs {
		g, _ := systemNamed(r.Grit)
		o, _ := systemNamed(r.River)
		switch {
		case len(g.versus) > 0:
			if !slices.Contains(g.versus, o.name) {
				t.Errorf("ratio %s ÷ %s: want %s over %v only", r.Grit, r.River, r.Grit, g.versus)
			}
		case !g.grit || o.grit || g.store != o.store:
			t.Errorf("ratio %s ÷ %s: want a grit system over another on the same store", r.Grit, r.River)
		}
		if r.Throughput == nil || *r.Throughput <= 0 || r.LatencyP99 == nil || *r.LatencyP99 <= 0 {
			t.Errorf("ratio %s ÷ %s incomplete: %+v", r.Grit, r.River, r)
		}
		if len(r.ThroughputByRound) != rounds {
			t.Errorf("ratio %s ÷ %s: %d throughput ratios by round, want %d", r.Grit, r.River, len(r.ThroughputByRound), rounds)
		}
		for k, v := range r.ThroughputByRound {
			if v == nil || *v <= 0 {
				t.Errorf("ratio %s ÷ %s: round %d's throughput ratio %v", r.Grit, r.River, k+1, v)
			}
		}
	}
}

// checkSchemasDropped checks that the run left none of its schemas.
func checkSchemasDropped(t *testing.T, dsn string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var left []string
	rows, err := conn.Query(ctx, `SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE $1`,
		fmt.Sprintf("queuecmp\\_%d\\_%%", os.Getpid()))
	if err == nil {
		left, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("schemas left behind: %v", left)
	}
}

// checkProfile checks that a CPU profile was written: gzip, as pprof
// writes it.
func checkProfile(t *testing.T, name string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Errorf("--cpuprofile: %v", err)
		return
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--cpuprofile: %s is not a gzipped profile (%d bytes)", name, len(b))
	}
}
