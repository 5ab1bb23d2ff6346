package main

import (
	"math"
	"slices"
	"sync"
	"time"
)

// recorder collects one sample per job of a workload, from the handlers
// running at once.
type recorder struct {
	warm chan struct{} // closed when the warm-up job has run
	done chan struct{} // closed when every job has its sample

	warmOnce sync.Once
	mu       sync.Mutex
	vals     []time.Duration
	seen     []bool
	got      int
}

func newRecorder(n int) *recorder {
	return &recorder{
		warm: make(chan struct{}), done: make(chan struct{}),
		vals: make([]time.Duration, n), seen: make([]bool, n),
	}
}

func (r *recorder) warmedUp() { r.warmOnce.Do(func() { close(r.warm) }) }

// add records job seq's sample; a second sample for the same job (a
// duplicate run) is ignored.
func (r *recorder) add(seq int, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq < 0 || seq >= len(r.vals) || r.seen[seq] {
		return
	}
	r.vals[seq], r.seen[seq] = d, true
	r.got++
	if r.got == len(r.vals) {
		close(r.done)
	}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

// values returns the samples recorded so far.
func (r *recorder) values() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for i, ok := range r.seen {
		if ok {
			out = append(out, r.vals[i])
		}
	}
	return out
}

// dist summarizes samples, in milliseconds.
type dist struct {
	Samples int     `json:"samples"`
	P50     float64 `json:"p50_ms"`
	P90     float64 `json:"p90_ms"`
	P99     float64 `json:"p99_ms"`
	Max     float64 `json:"max_ms"`
}

func summarize(ds []time.Duration) dist {
	if len(ds) == 0 {
		return dist{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return dist{
		Samples: len(s),
		P50:     ms(quantile(s, 0.50)), P90: ms(quantile(s, 0.90)), P99: ms(quantile(s, 0.99)),
		Max: ms(s[len(s)-1]),
	}
}

// quantile is the nearest-rank quantile q of sorted samples: the smallest
// sample with at least q of them at or below it.
func quantile(sorted []time.Duration, q float64) time.Duration {
	// The epsilon keeps 0.99×100 at rank 99 despite rounding.
	i := int(math.Ceil(q*float64(len(sorted))-1e-9)) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// throughputResult is the throughput workload's outcome.
type throughputResult struct {
	Jobs       int     `json:"jobs"`
	Ran        int     `json:"handler_runs"`
	Completed  int     `json:"completed_in_db"`
	Seconds    float64 `json:"seconds"`
	JobsPerSec float64 `json:"jobs_per_sec"`
	// FirstJobMs is how long after the worker's start its first job ran:
	// the part of Seconds the worker spent starting and on its first
	// claim.
	FirstJobMs float64 `json:"first_job_ms"`
	// Rounds is the jobs/s of every run of the workload, in round order;
	// the other fields are the median run's.
	Rounds []float64 `json:"rounds_jobs_per_sec"`
	// CPU per job over the same time, in microseconds: this process's
	// (the worker, the idle insert client, the run's own polling) and the
	// PostgreSQL server's, null when the server is not on this machine.
	ProcessCPUPerJob float64  `json:"process_cpu_us_per_job"`
	ServerCPUPerJob  *float64 `json:"db_cpu_us_per_job"`
	// CPUBusy is both over the time and the machine's CPUs: near 1, the
	// machine's CPUs were the limit.
	CPUBusy *float64 `json:"cpu_busy"`
}
