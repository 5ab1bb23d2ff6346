package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// report is a whole run's outcome, printed as a table or as JSON.
type report struct {
	Machine machine  `json:"machine"`
	Params  params   `json:"params"`
	Systems []result `json:"systems"`
	Ratios  []ratio  `json:"ratios"`
}

type params struct {
	Jobs         int     `json:"jobs"`
	Rounds       int     `json:"rounds"`
	LatencyJobs  int     `json:"latency_jobs"`
	RetryJobs    int     `json:"retry_jobs"`
	PaceMs       float64 `json:"pace_ms"`
	RetryDelayMs float64 `json:"retry_delay_ms"`
	Backlog      int     `json:"backlog,omitempty"`
	Future       int     `json:"future,omitempty"`
}

// result is one system's outcome on every workload.
type result struct {
	System     string           `json:"system"`
	Config     string           `json:"config"`
	Throughput throughputResult `json:"throughput"`
	Latency    dist             `json:"enqueue_to_start"`
	Retry      dist             `json:"retry_lateness"`
	// Backlog is the drain of --backlog jobs due before the start, and
	// BacklogRatio its rate over the throughput workload's (nil: not run).
	Backlog      *throughputResult `json:"backlog,omitempty"`
	BacklogRatio *float64          `json:"backlog_ratio,omitempty"`
	// Future is enqueue→start with --future jobs due in an hour waiting,
	// and FutureRatio its p99 over Latency's (nil: not run).
	Future      *dist    `json:"enqueue_to_start_behind_future,omitempty"`
	FutureRatio *float64 `json:"future_p99_ratio,omitempty"`
}

// ratio compares a grit system with another system on the same store
// (River or the limit): grit's number over the other's. A throughput ratio
// above 1 and a latency ratio below 1 favour grit. A ratio is null when
// the other's number is not positive. Throughput is the median runs'
// ratio; ThroughputByRound pairs the runs of each round, which ran seconds
// apart.
type ratio struct {
	Grit              string     `json:"grit"`
	River             string     `json:"river"`
	Throughput        *float64   `json:"throughput"`
	ThroughputByRound []*float64 `json:"throughput_by_round"`
	LatencyP99        *float64   `json:"enqueue_to_start_p99"`
	RetryP99          *float64   `json:"retry_lateness_p99"`
	Backlog           *float64   `json:"backlog,omitempty"`    // the backlog drains' rates
	FutureP99         *float64   `json:"future_p99,omitempty"` // enqueue→start p99 behind the future jobs
}

func ratios(systems []system, results []result) []ratio {
	var out []ratio
	for i, g := range results {
		if !systems[i].grit {
			continue
		}
		for j, r := range results {
			if vs := systems[i].versus; len(vs) > 0 {
				if !slices.Contains(vs, systems[j].name) {
					continue
				}
			} else if systems[j].grit || systems[j].store != systems[i].store {
				// A ratio across stores would measure the store, not the queue.
				continue
			}
			var byRound []*float64
			for k := range min(len(g.Throughput.Rounds), len(r.Throughput.Rounds)) {
				byRound = append(byRound, over(g.Throughput.Rounds[k], r.Throughput.Rounds[k]))
			}
			x := ratio{
				Grit: g.System, River: r.System,
				Throughput: over(g.Throughput.JobsPerSec, r.Throughput.JobsPerSec), ThroughputByRound: byRound,
				LatencyP99: over(g.Latency.P99, r.Latency.P99),
				RetryP99:   over(g.Retry.P99, r.Retry.P99),
			}
			if g.Backlog != nil && r.Backlog != nil {
				x.Backlog = over(g.Backlog.JobsPerSec, r.Backlog.JobsPerSec)
			}
			if g.Future != nil && r.Future != nil {
				x.FutureP99 = over(g.Future.P99, r.Future.P99)
			}
			out = append(out, x)
		}
	}
	return out
}

func over(a, b float64) *float64 {
	if b <= 0 {
		return nil
	}
	r := a / b
	return &r
}

func (r report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r report) writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tjobs/s\tcpu/job proc\tdb\t\tstart p50\tp90\tp99\tmax\t\tretry late p50\tp99\tmax\t")
	for _, s := range r.Systems {
		l, rt, tp := s.Latency, s.Retry, s.Throughput
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%s\t\t%.2f\t%.2f\t%.2f\t%.2f\t\t%.2f\t%.2f\t%.2f\t\n",
			s.System, tp.JobsPerSec, tp.ProcessCPUPerJob, fmtOpt(tp.ServerCPUPerJob), l.P50, l.P90, l.P99, l.Max, rt.P50, rt.P99, rt.Max)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	p := r.Params
	fmt.Fprintf(w, "\nthroughput: %d no-op jobs inserted first, the median of %d runs taken in turn; start: enqueue→start of %d jobs inserted %gms apart (ms);\n", p.Jobs, p.Rounds, p.LatencyJobs, p.PaceMs)
	fmt.Fprintf(w, "cpu/job: CPU time per job during the throughput workload (µs), of this process and of the PostgreSQL server (n/a: not on this machine, or SQLite, which runs in this process);\n")
	fmt.Fprintf(w, "retry late: start of attempt 2 − (end of attempt 1 + %gms), %d jobs (ms)\n", p.RetryDelayMs, p.RetryJobs)
	if len(r.Ratios) > 0 {
		fmt.Fprintln(w, "\nratios, grit ÷ River and ÷ the limit on the same store (throughput above 1 and latency below 1 favour grit):")
	}
	for _, x := range r.Ratios {
		byRound := ""
		if len(x.ThroughputByRound) > 1 {
			rs := make([]string, len(x.ThroughputByRound))
			for i, v := range x.ThroughputByRound {
				rs[i] = fmtRatio(v)
			}
			byRound = " (by round: " + strings.Join(rs, ", ") + ")"
		}
		fmt.Fprintf(w, "  %s ÷ %s: throughput %s%s, start p99 %s, retry late p99 %s%s\n",
			x.Grit, x.River, fmtRatio(x.Throughput), byRound, fmtRatio(x.LatencyP99), fmtRatio(x.RetryP99), grownRatios(x))
	}
	r.writeGrowth(w)
	fmt.Fprintln(w, "\nsystems:")
	for _, s := range r.Systems {
		fmt.Fprintf(w, "  %s: %s\n", s.System, s.Config)
	}
	_, err := fmt.Fprintf(w, "\n%s\n", r.Machine)
	return err
}

func fmtOpt(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", *v)
}

func fmtRatio(r *float64) string {
	if r == nil {
		return "n/a"
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", *r), "0"), ".") + "x"
}

// grownRatios are a ratio's figures of --backlog and --future, if run.
func grownRatios(x ratio) string {
	s := ""
	if x.Backlog != nil {
		s += ", backlog drain " + fmtRatio(x.Backlog)
	}
	if x.FutureP99 != nil {
		s += ", start p99 behind the future jobs " + fmtRatio(x.FutureP99)
	}
	return s
}

// writeGrowth prints how each system's figures grow with --backlog and
// --future: the drain of the backlog against the throughput workload, and
// enqueue→start behind jobs due in an hour against it with none.
func (r report) writeGrowth(w io.Writer) {
	p := r.Params
	if p.Backlog == 0 && p.Future == 0 {
		return
	}
	fmt.Fprintln(w, "\nas the queue grows, each system against itself:")
	for _, s := range r.Systems {
		if s.Backlog != nil {
			fmt.Fprintf(w, "  %s: drained %d jobs due before the start at %.0f jobs/s, %s its rate on %d\n",
				s.System, p.Backlog, s.Backlog.JobsPerSec, fmtRatio(s.BacklogRatio), p.Jobs)
		}
		if s.Future != nil {
			fmt.Fprintf(w, "  %s: enqueue→start p50/p99 %.2f/%.2f ms with %d jobs due in an hour waiting, p99 %s its p99 with none\n",
				s.System, s.Future.P50, s.Future.P99, p.Future, fmtRatio(s.FutureRatio))
		}
	}
}
