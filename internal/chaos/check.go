package chaos

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grit-run/grit/task"
)

// Report is what a chaos run did and found.
type Report struct {
	Seed        uint64
	Took        time.Duration
	Acked       int            // tasks whose enqueue returned
	NotAcked    int            // tasks whose enqueue failed (not acknowledged: not checked)
	Faults      map[string]int // by kind
	Attempts    int
	Interrupted int // attempts that did not succeed, each explained by a fault
	Reruns      int // bodies that ran to their end more than once for a task
	Takeovers   []time.Duration
	Settled     bool
	Violations  []string
}

// Passed reports whether no invariant was violated.
func (r *Report) Passed() bool { return len(r.Violations) == 0 }

func (r *Report) violate(format string, args ...any) {
	if len(r.Violations) < 50 {
		r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
	}
}

// Print writes the report's summary.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "chaos run, seed %d, %v\n", r.Seed, r.Took.Round(time.Second))
	fmt.Fprintf(w, "  tasks acknowledged  %d (enqueues refused: %d)\n", r.Acked, r.NotAcked)
	kinds := make([]string, 0, len(r.Faults))
	for k := range r.Faults {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var fs []string
	for _, k := range kinds {
		fs = append(fs, fmt.Sprintf("%s %d", k, r.Faults[k]))
	}
	fmt.Fprintf(w, "  faults              %s\n", strings.Join(fs, ", "))
	fmt.Fprintf(w, "  attempts            %d, %d interrupted by a fault; %d bodies ran to their end twice\n", r.Attempts, r.Interrupted, r.Reruns)
	if n := len(r.Takeovers); n > 0 {
		s := slices.Sorted(slices.Values(r.Takeovers))
		fmt.Fprintf(w, "  takeover            %d attempts: median %v, p90 %v, max %v after the fault\n", n,
			s[n/2].Round(time.Millisecond), s[n*9/10].Round(time.Millisecond), s[n-1].Round(time.Millisecond))
	}
	fmt.Fprintf(w, "  all final           %v\n", r.Settled)
	if r.Passed() {
		fmt.Fprintln(w, "  invariants          all held: none lost, none succeeded twice, every task final, re-runs only of interrupted attempts")
		return
	}
	fmt.Fprintf(w, "  VIOLATIONS          %d\n", len(r.Violations))
	for _, v := range r.Violations {
		fmt.Fprintf(w, "    %s\n", v)
	}
}

// check checks the invariants from the store and the ledger.
func (r *run) check(ctx context.Context, settled bool) (*Report, error) {
	rep := &Report{Seed: r.cfg.Seed, Acked: len(r.acked), NotAcked: r.failed, Faults: map[string]int{}, Settled: settled}
	for _, f := range r.faults {
		rep.Faults[f.Kind]++
	}
	if !settled {
		rep.violate("not every task was final %v after the last fault", r.cfg.Settle)
	}
	ts, err := r.cfg.Store.ListTasks(ctx, task.Filter{})
	if err != nil {
		return nil, fmt.Errorf("chaos: list tasks: %w", err)
	}
	byID := make(map[int64]task.Task, len(ts))
	for _, t := range ts {
		byID[t.ID] = t
	}
	ledger, err := readLedger(r.ledger)
	if err != nil {
		return nil, err
	}
	for _, id := range r.acked {
		t, ok := byID[id]
		if !ok {
			rep.violate("task %d: acknowledged, not in the store (lost)", id)
			continue
		}
		as, err := r.cfg.Store.Attempts(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("chaos: attempts of task %d: %w", id, err)
		}
		r.checkTask(rep, t, as, ledger[id])
	}
	return rep, nil
}

// checkTask checks one task: SUCCESS, with one successful attempt whose
// body ran to its end; every other attempt interrupted by a fault; every
// body the ledger saw run under a lease the store recorded.
func (r *run) checkTask(rep *Report, t task.Task, as []task.Attempt, runs map[int64]*bodyRun) {
	rep.Attempts += len(as)
	successes := 0
	tokens := map[int64]bool{}
	for _, a := range as {
		tokens[a.LeaseToken] = true
		if a.Outcome == task.OutcomeSuccess {
			successes++
			if br := runs[a.LeaseToken]; br == nil || !br.ended {
				rep.violate("task %d: its successful attempt %d has no end in the ledger", t.ID, a.Number)
			}
			continue
		}
		if f, ok := r.explain(a); ok {
			rep.Interrupted++
			if f.Kind != "pg-restart" && a.Worker == f.Worker && a.EndedAt.After(f.At) {
				rep.Takeovers = append(rep.Takeovers, a.EndedAt.Sub(f.At))
			}
			continue
		}
		rep.violate("task %d: attempt %d on %s ended %s (%s) and no fault explains it", t.ID, a.Number, a.Worker, a.Outcome, a.Error)
	}
	if t.State != task.Success || successes != 1 {
		rep.violate("task %d: %s with %d successful attempts; want SUCCESS with exactly one", t.ID, t.State, successes)
	}
	ended := 0
	for tok, br := range runs {
		if !tokens[tok] {
			rep.violate("task %d: a body ran under lease %d, which no attempt of the store has", t.ID, tok)
		}
		if br.ended {
			ended++
		}
	}
	rep.Reruns += max(ended-1, 0)
}

// explain finds the fault that interrupted a, if any: one on a's worker,
// or on the database, while a ran (a second either side).
func (r *run) explain(a task.Attempt) (fault, bool) {
	start, end := a.StartedAt, a.EndedAt
	if start.IsZero() {
		start = end.Add(-3 * r.cfg.Lease)
	}
	for _, f := range r.faults {
		if f.Kind != "pg-restart" && f.Worker != a.Worker {
			continue
		}
		if !f.At.After(end.Add(time.Second)) && !f.End.Before(start.Add(-time.Second)) {
			return f, true
		}
	}
	return fault{}, false
}

// bodyRun is what the ledger saw of a body run under one lease.
type bodyRun struct{ ended bool }

// readLedger reads the ledger: for each task, the runs of its body by
// lease token.
func readLedger(path string) (map[int64]map[int64]*bodyRun, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[int64]map[int64]*bodyRun{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	defer f.Close()
	out := map[int64]map[int64]*bodyRun{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 {
			continue // a line cut by a kill
		}
		id, err1 := strconv.ParseInt(fs[0], 10, 64)
		tok, err2 := strconv.ParseInt(fs[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if out[id] == nil {
			out[id] = map[int64]*bodyRun{}
		}
		br := out[id][tok]
		if br == nil {
			br = &bodyRun{}
			out[id][tok] = br
		}
		br.ended = br.ended || fs[3] == "end"
	}
	return out, sc.Err()
}
