package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// cpuUse is the CPU time used so far by this process (the worker and the
// insert client of the system being measured, and the run itself) and by
// the PostgreSQL server, when it runs on this machine: its postmaster and
// every process the postmaster started (backends, WAL writer,
// checkpointer, autovacuum).
type cpuUse struct {
	self     time.Duration
	server   map[int]time.Duration // by pid
	serverOK bool
}

// findServer returns the pid of the PostgreSQL postmaster behind pool when
// it runs on this machine and /proc shows it, else 0: the server's CPU is
// then not reported. It asks for the pid of its own backend and reads that
// process's parent.
func findServer(ctx context.Context, pool *pgxpool.Pool) int {
	var backend int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0
	}
	st, ok := readStat(backend)
	if !ok || st.comm != "postgres" {
		return 0 // another machine's pid, or no /proc
	}
	if pm, ok := readStat(st.ppid); !ok || pm.comm != "postgres" {
		return 0
	}
	return st.ppid
}

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ, 100 on
// Linux.
const userHZ = 100

type procStat struct {
	comm string
	ppid int
	cpu  time.Duration // user + system
}

// readStat reads /proc/PID/stat: the command name is in parentheses and
// may hold spaces, so the fields are counted from its closing one.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	return parseStat(string(b))
}

func parseStat(s string) (procStat, bool) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := strings.Fields(s[end+1:])
	// f[0] is the state, f[1] the parent, f[11] and f[12] utime and stime.
	if len(f) < 13 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	ut, err2 := strconv.ParseInt(f[11], 10, 64)
	st, err3 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{comm: s[open+1 : end], ppid: ppid, cpu: time.Duration(ut+st) * time.Second / userHZ}, true
}

// serverCPU reads the CPU time of the postmaster and of each of its
// children, by pid.
func serverCPU(postmaster int) (map[int]time.Duration, bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	byPID := map[int]time.Duration{}
	found := false
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if ok && (pid == postmaster || st.ppid == postmaster) {
			byPID[pid] = st.cpu
			found = found || pid == postmaster
		}
	}
	return byPID, found
}

// serverDelta is the server's CPU time between two readings, process by
// process: a process started since the first counts whole, one that ended
// takes its time with it (so the difference can only undercount; the
// workloads keep their connections open from the first reading to the
// second), and a pid taken again by a new process counts as new. Summing
// the readings instead gave a negative difference whenever a busy process
// (an autovacuum worker, another client's backend) ended between them.
func serverDelta(from, to map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, cpu := range to {
		if before, ok := from[pid]; ok && before <= cpu {
			cpu -= before
		}
		d += cpu
	}
	return d
}

// cpuNow reads the CPU used so far; the server's only for a system on
// PostgreSQL (SQLite runs in this process).
func (e *env) cpuNow(sys system) cpuUse {
	u := cpuUse{self: selfCPU()}
	if e.server != 0 && sys.store == onPostgres {
		u.server, u.serverOK = serverCPU(e.server)
	}
	return u
}

// perJob is the CPU each job took between two readings, in microseconds;
// the server's is nil when it was not read.
func perJob(from, to cpuUse, jobs int) (self float64, server *float64) {
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(jobs) }
	self = us(to.self - from.self)
	if from.serverOK && to.serverOK {
		s := us(serverDelta(from.server, to.server))
		server = &s
	}
	return self, server
}
