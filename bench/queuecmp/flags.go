package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// defaultDSN is the database used when neither --db nor GRIT_TEST_POSTGRES
// names one.
const defaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// options are the command line's settings.
type options struct {
	db          string
	jobs        int
	rounds      int
	latencyJobs int
	retryJobs   int
	backlog     int // jobs of the backlog drain; 0: none
	future      int // jobs due in an hour behind the second latency workload; 0: none
	systems     []system
	json        bool
	cpuprofile  string
}

// parseFlags reads the command line. A bad flag is an error that says what
// to do; -h is flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("queuecmp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var systems string
	fs.StringVar(&o.db, "db", envDSN(), "PostgreSQL URL; $GRIT_TEST_POSTGRES, when set, is the default")
	fs.IntVar(&o.jobs, "jobs", 20000, "jobs of the throughput workload")
	fs.IntVar(&o.rounds, "rounds", 3, "runs of the throughput workload per system, taken in turn; each system's median run is reported")
	fs.IntVar(&o.latencyJobs, "latency-jobs", 2000, "jobs of the enqueue-to-start latency workload")
	fs.IntVar(&o.retryJobs, "retry-jobs", 500, "jobs of the retry lateness workload")
	fs.IntVar(&o.backlog, "backlog", 0, "also drain a backlog of this many jobs, all due before the worker starts, once per system, beside the throughput workload's rate (0: no backlog drain)")
	fs.IntVar(&o.future, "future", 0, "also measure enqueue→start with this many jobs waiting, due in an hour (0: not)")
	fs.StringVar(&systems, "systems", strings.Join(systemNames(), ","), "comma-separated systems to run")
	fs.BoolVar(&o.json, "json", false, "print one JSON object instead of a table")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of each system's throughput workload to FILE.<system>")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return options{}, err
		}
		return options{}, parseError{err}
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q: queuecmp takes only flags", fs.Arg(0))
	}
	var err error
	if o.systems, err = parseSystems(systems); err != nil {
		return options{}, err
	}
	return o, o.validate()
}

// parseError is an error the flag package has printed already, with the
// usage.
type parseError struct{ err error }

func (e parseError) Error() string { return e.err.Error() }
func (e parseError) Unwrap() error { return e.err }

func envDSN() string {
	if v := os.Getenv("GRIT_TEST_POSTGRES"); v != "" {
		return v
	}
	return defaultDSN
}

func (o options) validate() error {
	for _, c := range []struct {
		flag string
		n    int
	}{{"--jobs", o.jobs}, {"--latency-jobs", o.latencyJobs}, {"--retry-jobs", o.retryJobs}} {
		if c.n <= 0 {
			return fmt.Errorf("%s %d: want a positive number of jobs (e.g. %s 1000)", c.flag, c.n, c.flag)
		}
	}
	for _, c := range []struct {
		flag string
		n    int
	}{{"--backlog", o.backlog}, {"--future", o.future}} {
		if c.n < 0 {
			return fmt.Errorf("%s %d: want a number of jobs, or 0 for none (e.g. %s 1000000)", c.flag, c.n, c.flag)
		}
	}
	if o.rounds <= 0 {
		return fmt.Errorf("--rounds %d: want at least one run of the throughput workload per system (e.g. --rounds 3)", o.rounds)
	}
	if !strings.HasPrefix(o.db, "postgres://") && !strings.HasPrefix(o.db, "postgresql://") {
		return errors.New("--db: want a PostgreSQL URL (e.g. " + defaultDSN + ")")
	}
	return nil
}

// parseSystems reads a comma-separated list of known systems, in the
// order given, each at most once.
func parseSystems(s string) ([]system, error) {
	var out []system
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		sys, ok := systemNamed(name)
		switch {
		case name == "":
			return nil, fmt.Errorf("--systems %q: empty system name (want a comma-separated list of %s)", s, strings.Join(systemNames(), ", "))
		case !ok:
			return nil, fmt.Errorf("--systems: unknown system %q (want some of %s)", name, strings.Join(systemNames(), ", "))
		case seen[name]:
			return nil, fmt.Errorf("--systems: %q is listed twice", name)
		}
		seen[name] = true
		out = append(out, sys)
	}
	return out, nil
}
