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

// runSummary is what grit run and grit wait print at the end, and its
// JSON shape.
type runSummary struct {
	Run   int64      `json:"run"`
	Name  string     `json:"name"`
	State task.State `json:"state"`
	Tasks []taskJSON `json:"tasks"`
	// WaitingOn names, for each PENDING task that waits behind dead
	// letters, those dead letters (by task name).
	WaitingOn map[string][]string `json:"waiting_on"`
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
		e.pointToDashboard(s.Run)
	}
	if s.State != task.Success {
		return &exitError{code: exitFailed, err: errSilent}
	}
	return nil
}

func buildSummary(r task.Run, ts []task.Task, edges []task.Edge) runSummary {
	s := runSummary{Run: r.ID, Name: r.Name, State: r.State, Tasks: taskViews(ts), WaitingOn: map[string][]string{}}
	for id, names := range deadLetterBlockers(ts, edges) {
		for _, t := range ts {
			if t.ID == id && len(names) > 0 {
				s.WaitingOn[t.Name] = names
			}
		}
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
func deadLetterBlockers(ts []task.Task, edges []task.Edge) map[int64][]string {
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
		fp, errText := t.Fingerprint, firstLine(t.Error)
		if t.State == task.Success {
			fp, errText = "", ""
		}
		if blockers := s.WaitingOn[t.Name]; len(blockers) > 0 {
			errText = "waiting on dead letter " + strings.Join(blockers, ", ")
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", t.Name, t.State, t.Attempt,
			spent(t.FirstStartedAt, t.FinishedAt), short(fp), errText)
	}
	w.Flush()
}

// spent is how long a task took from its first start to its end, "-" if
// it did not both start and end.
func spent(start, end *time.Time) string {
	if start == nil || end == nil {
		return "-"
	}
	return end.Sub(*start).Round(time.Millisecond).String()
}

// pointToDashboard tells, after a run's summary, where to look at it in a
// browser.
func (e *env) pointToDashboard(run int64) {
	store := ""
	if e.storeDSN != defaultStoreDSN {
		store = " --store '" + shownDSN(e.storeDSN) + "'"
	}
	fmt.Fprintf(e.stdout, "\nsee it in a browser: grit dashboard%s, then open http://%s/runs/%d\n", store, knobHTTP.def, run)
}
