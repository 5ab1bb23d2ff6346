package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// runSummary is what grit run prints at the end, and its JSON shape.
type runSummary struct {
	Run   int64         `json:"run"`
	Name  string        `json:"name"`
	State task.State    `json:"state"`
	Tasks []taskSummary `json:"tasks"`
}

type taskSummary struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	State       task.State `json:"state"`
	Attempts    int        `json:"attempts"`
	Error       string     `json:"error,omitempty"`
	Fingerprint string     `json:"fingerprint,omitempty"`
	DurationMS  int64      `json:"duration_ms"`
	WaitingOn   []string   `json:"waiting_on,omitempty"` // dead letters a PENDING task waits behind
}

func (e *env) summarize(ctx context.Context, st store.Store, runID int64, ts []task.Task, asJSON bool) error {
	r, err := st.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	edges, err := st.Edges(ctx, runID)
	if err != nil {
		return err
	}
	s := buildSummary(r, ts, edges)
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		if err := enc.Encode(s); err != nil {
			return err
		}
	} else {
		printSummary(e, s)
	}
	if s.State != task.Success {
		return &exitError{code: exitFailed, err: errSilent}
	}
	return nil
}

func buildSummary(r task.Run, ts []task.Task, edges []store.Edge) runSummary {
	s := runSummary{Run: r.ID, Name: r.Name, State: r.State}
	blockers := deadLetterBlockers(ts, edges)
	for _, t := range ts {
		ts := taskSummary{
			ID: t.ID, Name: t.Name, State: t.State, Attempts: t.Attempt,
			WaitingOn: blockers[t.ID],
		}
		if t.State != task.Success {
			ts.Error, ts.Fingerprint = t.LastError, t.Fingerprint
		}
		if !t.FirstStartedAt.IsZero() && !t.FinishedAt.IsZero() {
			ts.DurationMS = t.FinishedAt.Sub(t.FirstStartedAt).Milliseconds()
		}
		s.Tasks = append(s.Tasks, ts)
	}
	if !s.State.Terminal() && hasDeadLetter(ts) {
		// The run waits for an operator: it says so in the design's word.
		s.State = task.DeadLetter
	}
	return s
}

func hasDeadLetter(ts []task.Task) bool {
	for _, t := range ts {
		if t.State == task.DeadLetter {
			return true
		}
	}
	return false
}

// deadLetterBlockers maps each PENDING task to the dead letters upstream of
// it, which it waits for.
func deadLetterBlockers(ts []task.Task, edges []store.Edge) map[int64][]string {
	byID := map[int64]task.Task{}
	for _, t := range ts {
		byID[t.ID] = t
	}
	needs := map[int64][]int64{}
	for _, e := range edges {
		needs[e.To] = append(needs[e.To], e.From)
	}
	out := map[int64][]string{}
	for _, t := range ts {
		if t.State != task.Pending {
			continue
		}
		seen := map[int64]bool{}
		var walk func(id int64)
		walk = func(id int64) {
			for _, up := range needs[id] {
				if seen[up] {
					continue
				}
				seen[up] = true
				if byID[up].State == task.DeadLetter {
					out[t.ID] = append(out[t.ID], byID[up].Name)
				}
				walk(up)
			}
		}
		walk(t.ID)
		sort.Strings(out[t.ID])
	}
	return out
}

func printSummary(e *env, s runSummary) {
	fmt.Fprintf(e.stdout, "\nrun %d (%s): %s\n", s.Run, s.Name, s.State)
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TASK\tSTATE\tATTEMPTS\tTIME\tFINGERPRINT\tERROR")
	for _, t := range s.Tasks {
		errText := firstLine(t.Error)
		if len(t.WaitingOn) > 0 {
			errText = "waiting on dead letter " + strings.Join(t.WaitingOn, ", ")
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", t.Name, t.State, t.Attempts,
			formatMS(t.DurationMS), short(t.Fingerprint), errText)
	}
	w.Flush()
}

func formatMS(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}
