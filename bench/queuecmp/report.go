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
}

// result is one system's outcome on every workload.
type result struct {
	System     string           `json:"system"`
	Config     string           `json:"config"`
	Throughput throughputResult `json:"throughput"`
	Latency    dist             `json:"enqueue_to_start"`
	Retry      dist             `json:"retry_lateness"`
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
			out = append(out, ratio{
				Grit: g.System, River: r.System,
				Throughput: over(g.Throughput.JobsPerSec, r.Throughput.JobsPerSec), ThroughputByRound: byRound,
				LatencyP99: over(g.Latency.P99, r.Latency.P99),
				RetryP99:   over(g.Retry.P99, r.Retry.P99),
			})
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
		fmt.Fprintf(w, "  %s ÷ %s: throughput %s%s, start p99 %s, retry late p99 %s\n",
			x.Grit, x.River, fmtRatio(x.Throughput), byRound, fmtRatio(x.LatencyP99), fmtRatio(x.RetryP99))
	}
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
