package dash

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestAttemptChartCountsTheCurrentMinute: the store's series runs up to
// its now, whose bucket has only begun; the chart draws it too.
func TestAttemptChartCountsTheCurrentMinute(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 20, 15, 31, 0, time.UTC)
	since := now.Add(-time.Hour).Truncate(time.Minute)
	series := []store.AttemptBucket{
		{At: since, Outcomes: map[task.Outcome]int{task.OutcomeSuccess: 3}},
		{At: now.Truncate(time.Minute), Outcomes: map[task.Outcome]int{task.OutcomeSuccess: 2, task.OutcomeError: 2, task.OutcomeTimeout: 1, task.OutcomeSnoozed: 4}},
	}
	c := attemptChart(series, since, time.Minute)
	if c.Succeeded != 5 || c.Failed != 3 || c.Max != 5 {
		t.Errorf("chart counts %d succeeded, %d failed, at most %d a minute; want 5, 3 (snoozes are not failures), 5", c.Succeeded, c.Failed, c.Max)
	}
	if last := c.Bars[len(c.Bars)-1]; last.OK != 2 || last.Fail != 3 {
		t.Errorf("the current minute's bar is %+v", last)
	}
}

// TestDAGLayout: a task sits a column right of the deepest task it
// needs; a PENDING task behind a dead letter is marked, and its edge.
func TestDAGLayout(t *testing.T) {
	t.Parallel()
	ts := []task.Task{
		{ID: 1, Name: "extract", State: task.Success},
		{ID: 2, Name: "charge", State: task.DeadLetter},
		{ID: 3, Name: "load", State: task.Pending},
		{ID: 4, Name: "report", State: task.Pending},
	}
	g := layoutDAG(ts, []task.Edge{{From: 1, To: 2}, {From: 1, To: 3}, {From: 2, To: 3}, {From: 3, To: 4}})
	col := map[int64]float64{}
	for _, n := range g.Nodes {
		col[n.ID] = n.X
		if n.WaitsOnDLQ != (n.ID == 3) {
			t.Errorf("task %d: waits on a dead letter %v", n.ID, n.WaitsOnDLQ)
		}
	}
	if !(col[1] < col[2] && col[2] < col[3] && col[3] < col[4]) {
		t.Errorf("columns %v: want each task right of what it needs", col)
	}
	blocked := 0
	for _, e := range g.Edges {
		if e.Class == "edge edge-blocked" {
			blocked++
		}
	}
	if len(g.Edges) != 4 || blocked != 1 {
		t.Errorf("%d edges, %d blocked; want 4 and 1", len(g.Edges), blocked)
	}
}
