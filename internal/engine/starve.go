package engine

import (
	"math"
	"runtime/metrics"
	"time"
)

// runWaits reads, from the Go runtime's histogram of how long goroutines
// waited to run once runnable, how starved of CPU this process was since
// the last read. The lease timer cannot tell it alone: a timer wakes its
// goroutine ahead of the others, and fired on time while a heartbeat's
// answer, come from the database, waited five seconds behind a thousand
// goroutines of processes that had just ended.
type runWaits struct {
	sample []metrics.Sample
	prev   []uint64
}

const schedLatencies = "/sched/latencies:seconds"

func newRunWaits() *runWaits {
	r := &runWaits{sample: []metrics.Sample{{Name: schedLatencies}}}
	r.since()
	return r
}

// since returns how long the slowest in a hundred goroutines made
// runnable since the last call waited before it ran (the lower bound of
// its bucket), or 0 if the runtime does not say. One goroutine calls it.
func (r *runWaits) since() time.Duration {
	metrics.Read(r.sample)
	if r.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := r.sample[0].Value.Float64Histogram()
	defer func() { r.prev = append(r.prev[:0], h.Counts...) }()
	if len(r.prev) != len(h.Counts) {
		return 0
	}
	var total uint64
	for i, c := range h.Counts {
		total += c - r.prev[i]
	}
	var seen uint64
	for i, c := range h.Counts {
		seen += c - r.prev[i]
		if total > 0 && seen*100 >= total*99 {
			return seconds(h.Buckets[i])
		}
	}
	return 0
}

func seconds(s float64) time.Duration {
	if math.IsInf(s, 0) || math.IsNaN(s) || s <= 0 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

// starvedAfter is how late a timer must fire, or how long goroutines must
// wait to run, to tell of a process starved of CPU (a host loaded many
// times over its cores, a storm of goroutines, a process stopped and
// resumed): a quarter of a heartbeat, and at least 50ms, past the jitter
// of a busy runtime.
func starvedAfter(heartbeat time.Duration) time.Duration {
	return max(heartbeat/4, 50*time.Millisecond)
}

// starved handles leases that look expired in a process starved of CPU:
// the database may well have answered, and the answer wait to be read.
// They get one more beat, and a heartbeat for its answer, once after each
// renewal; then they are given up. So the attempts of a worker whose
// database is silent end within a lease and a heartbeat of its last
// renewal even then, and those of a starved worker whose database
// answers go on.
func (w *leaseWatch) starved(what string, now time.Time, late, wait time.Duration) {
	if w.graced {
		w.loseAll(now)
		return
	}
	w.graced = true
	w.e.cfg.Logger.Warn(what+": this process was starved of CPU; asking the database again before giving up the leases",
		"late", late, "run_wait", wait, "since_last", now.Sub(w.renewed))
	w.send()
	w.arm(w.e.cfg.Heartbeat)
}
