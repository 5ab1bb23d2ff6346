package dash

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The pictures are drawn on the server as SVG, so that they show without
// JavaScript and cost the browser nothing: numbers here, shapes in the
// templates.

// chart is the overview's attempts over the last hour: a stacked bar a
// minute, successes below failures.
type chart struct {
	Width, Height int
	Bars          []bar
	Max           int
	Succeeded     int
	Failed        int
	Ticks         []tick
}

type bar struct {
	X, W         float64
	OKY, OKH     float64 // the successes' rectangle
	FailY, FailH float64 // the failures' rectangle, above
	OK, Fail     int
	At           time.Time
	Label        string
}

type tick struct {
	X     float64
	Label string
}

const (
	chartW, chartH = 1200, 150
	chartTop       = 8
)

// attemptChart draws series (buckets of step from since) over an hour,
// and the bucket now is in, which has only begun.
func attemptChart(series []store.AttemptBucket, since time.Time, step time.Duration) chart {
	n := int(time.Hour/step) + 1
	c := chart{Width: chartW, Height: chartH}
	counts := make([][2]int, n)
	for _, b := range series {
		i := int(b.At.Sub(since) / step)
		if i < 0 || i >= n {
			continue
		}
		for o, k := range b.Outcomes {
			if o == task.OutcomeSuccess {
				counts[i][0] += k
			} else if o != task.OutcomeRunning && o != task.OutcomeSnoozed && o != task.OutcomeReleased {
				counts[i][1] += k
			}
		}
	}
	for _, k := range counts {
		c.Max = max(c.Max, k[0]+k[1])
		c.Succeeded += k[0]
		c.Failed += k[1]
	}
	scale := 0.0
	if c.Max > 0 {
		scale = float64(chartH-chartTop) / float64(c.Max)
	}
	w := float64(chartW) / float64(n)
	for i, k := range counts {
		okH, failH := float64(k[0])*scale, float64(k[1])*scale
		at := since.Add(time.Duration(i) * step)
		c.Bars = append(c.Bars, bar{
			X: float64(i)*w + 1, W: max(w-2, 1),
			OKY: chartH - okH, OKH: okH, FailY: chartH - okH - failH, FailH: failH,
			OK: k[0], Fail: k[1], At: at,
			Label: fmt.Sprintf("%s: %d succeeded, %d failed", at.Local().Format("15:04"), k[0], k[1]),
		})
		if i%15 == 0 && float64(i)*w < chartW-48 { // a label at the right edge would be cut
			c.Ticks = append(c.Ticks, tick{X: float64(i) * w, Label: at.Local().Format("15:04")})
		}
	}
	return c
}

// timeline is a task's attempts on one time axis: when each ran, and the
// waits between them.
type timeline struct {
	Width, Height int
	Rows          []span
	Span          time.Duration
	// Names are the rows' names, on a run's timeline (a row a task).
	Names []label
}

type span struct {
	Y, X, W float64
	// WaitX is where the previous attempt ended, when a wait (its retry's
	// delay, or a deferral) came between them: drawn as a dashed line.
	WaitX  float64
	Wait   bool
	Class  string // the outcome's style
	Label  string
	Number int
}

const timelineW, rowH = 1200, 22

func attemptTimeline(as []task.Attempt, now time.Time) timeline {
	tl := timeline{Width: timelineW}
	if len(as) == 0 {
		return tl
	}
	ax := axisOf(as, now, 0, timelineW)
	tl.Span = ax.span
	prevEnd := -1.0
	for i, a := range as {
		sp := ax.place(a, now, float64(i*rowH), "")
		if prevEnd >= 0 && sp.X > prevEnd+2 {
			sp.Wait, sp.WaitX = true, prevEnd
		}
		prevEnd = sp.X + sp.W
		tl.Rows = append(tl.Rows, sp)
	}
	tl.Height = len(as) * rowH
	return tl
}

// runTimelineTasks bounds the tasks a run's timeline draws.
const runTimelineTasks = 50

// nameW is the width of the run timeline's column of task names.
const nameW = 180

// runTimeline is a run's tasks' attempts on one time axis, a row a task
// (at most runTimelineTasks, in the order given), each attempt a span and
// the waits between a task's attempts dashed.
func runTimeline(ts []task.Task, attempts map[int64][]task.Attempt, now time.Time) timeline {
	tl := timeline{Width: timelineW}
	ts = ts[:min(len(ts), runTimelineTasks)]
	var all []task.Attempt
	for _, t := range ts {
		all = append(all, attempts[t.ID]...)
	}
	if len(all) == 0 {
		return tl
	}
	ax := axisOf(all, now, nameW, timelineW-nameW)
	tl.Span = ax.span
	for i, t := range ts {
		y := float64(i * rowH)
		name := cmp.Or(t.Name, t.Kind)
		tl.Names = append(tl.Names, label{Y: y + 12, Text: fmt.Sprintf("%s (%d)", name, t.ID), Href: fmt.Sprintf("/tasks/%d", t.ID)})
		prevEnd := -1.0
		for _, a := range attempts[t.ID] {
			sp := ax.place(a, now, y, name+": ")
			if prevEnd >= 0 && sp.X > prevEnd+2 {
				sp.Wait, sp.WaitX = true, prevEnd
			}
			prevEnd = sp.X + sp.W
			tl.Rows = append(tl.Rows, sp)
		}
	}
	tl.Height = len(ts) * rowH
	return tl
}

// label is a row's name on a timeline.
type label struct {
	Y          float64
	Text, Href string
}

// axis maps the time from start over span onto [x0, x0+w).
type axis struct {
	start  time.Time
	span   time.Duration
	x0, w  float64
	total  float64
	minimW float64
}

// axisOf is the axis that holds every attempt of as, the running ones to
// now.
func axisOf(as []task.Attempt, now time.Time, x0, w float64) axis {
	start, end := as[0].StartedAt, as[0].StartedAt
	for _, a := range as {
		if !a.StartedAt.IsZero() && a.StartedAt.Before(start) {
			start = a.StartedAt
		}
		if e := cmp.Or(a.EndedAt, now); e.After(end) {
			end = e
		}
	}
	span := end.Sub(start)
	return axis{start: start, span: span, x0: x0, w: w, total: float64(max(span, time.Millisecond)), minimW: 6}
}

// place is attempt a's span on the axis, at row y; its label begins with
// prefix.
func (ax axis) place(a task.Attempt, now time.Time, y float64, prefix string) span {
	e := cmp.Or(a.EndedAt, now)
	x := float64(a.StartedAt.Sub(ax.start)) / ax.total * ax.w
	w := max(float64(e.Sub(a.StartedAt))/ax.total*ax.w, ax.minimW)
	label := fmt.Sprintf("%sattempt %d: %s after %s", prefix, a.Number, a.Outcome, humanDur(e.Sub(a.StartedAt)))
	if a.Class != "" {
		label += ", " + a.Class
	}
	if a.Decision != "" {
		label += ", " + a.Decision
	}
	x = min(x, ax.w-ax.minimW)
	return span{Y: y, X: ax.x0 + x, W: min(w, max(ax.w-x, ax.minimW)), Class: "oc-" + lower(string(a.Outcome)), Label: label, Number: a.Number}
}

// dag is a run's tasks laid out in columns by depth: a task sits one
// column to the right of the deepest task it needs.
type dag struct {
	Width, Height int
	Nodes         []node
	Edges         []edge
}

type node struct {
	ID         int64
	X, Y       float64
	W, H       float64
	Name       string
	State      task.State
	Class      string
	Title      string
	WaitsOnDLQ bool // PENDING behind a dead letter: stuck until someone acts
}

type edge struct {
	X1, Y1, X2, Y2 float64
	MX             float64
	Class          string
}

const (
	nodeW, nodeH = 168, 34
	colGap       = 64
	rowGap       = 14
	dagPad       = 12
)

// maxDrawn bounds the tasks a run's picture draws: past it, the page
// lists them instead.
const maxDrawn = 400

func layoutDAG(ts []task.Task, edges []task.Edge) dag {
	if len(ts) == 0 || len(ts) > maxDrawn {
		return dag{}
	}
	byID := make(map[int64]task.Task, len(ts))
	for _, t := range ts {
		byID[t.ID] = t
	}
	needs := map[int64][]int64{}
	for _, e := range edges {
		needs[e.To] = append(needs[e.To], e.From)
	}
	cols, maxDepth := dagColumns(ts, needs)
	pos, tallest := placeNodes(cols, maxDepth)
	g := dag{Nodes: dagNodes(ts, pos, needs, byID), Edges: dagEdges(edges, pos, byID)}
	g.Width = dagPad*2 + (maxDepth+1)*nodeW + maxDepth*colGap
	g.Height = dagPad*2 + tallest*nodeH + max(tallest-1, 0)*rowGap
	return g
}

// dagColumns puts each task in the column of its depth, one more than
// the deepest of the tasks it needs.
func dagColumns(ts []task.Task, needs map[int64][]int64) (cols map[int][]task.Task, maxDepth int) {
	depth := map[int64]int{}
	var depthOf func(id int64, seen map[int64]bool) int
	depthOf = func(id int64, seen map[int64]bool) int {
		if d, ok := depth[id]; ok {
			return d
		}
		if seen[id] { // a cycle cannot be submitted; draw it flat if one is found
			return 0
		}
		seen[id] = true
		d := 0
		for _, from := range needs[id] {
			d = max(d, depthOf(from, seen)+1)
		}
		depth[id] = d
		return d
	}
	cols = map[int][]task.Task{}
	for _, t := range ts {
		d := depthOf(t.ID, map[int64]bool{})
		cols[d] = append(cols[d], t)
		maxDepth = max(maxDepth, d)
	}
	return cols, maxDepth
}

// placeNodes places each column's tasks top to bottom by id, and says how
// many the tallest column holds.
func placeNodes(cols map[int][]task.Task, maxDepth int) (pos map[int64]node, tallest int) {
	pos = map[int64]node{}
	for c := 0; c <= maxDepth; c++ {
		col := cols[c]
		slices.SortFunc(col, func(a, b task.Task) int { return cmp.Compare(a.ID, b.ID) })
		tallest = max(tallest, len(col))
		for i, t := range col {
			pos[t.ID] = node{
				ID: t.ID, X: float64(dagPad + c*(nodeW+colGap)), Y: float64(dagPad + i*(nodeH+rowGap)),
				W: nodeW, H: nodeH, Name: shorten(cmp.Or(t.Name, fmt.Sprint(t.ID)), 20), State: t.State,
				Class: "st-" + lower(string(t.State)),
				Title: fmt.Sprintf("%s (task %d): %s", cmp.Or(t.Name, t.Kind), t.ID, t.State),
			}
		}
	}
	return pos, tallest
}

// dagNodes are the placed tasks in ts's order, those pending behind a
// dead letter marked so.
func dagNodes(ts []task.Task, pos map[int64]node, needs map[int64][]int64, byID map[int64]task.Task) []node {
	var out []node
	for _, t := range ts {
		n := pos[t.ID]
		if t.State == task.Pending {
			for _, from := range needs[t.ID] {
				if byID[from].State == task.DeadLetter {
					n.WaitsOnDLQ = true
					n.Title += ": waits on a dead letter"
				}
			}
		}
		out = append(out, n)
	}
	return out
}

// dagEdges are the arrows between placed tasks, each classed by what it
// holds up.
func dagEdges(edges []task.Edge, pos map[int64]node, byID map[int64]task.Task) []edge {
	var out []edge
	for _, e := range edges {
		a, okA := pos[e.From]
		b, okB := pos[e.To]
		if !okA || !okB {
			continue
		}
		x1, y1, x2, y2 := a.X+a.W, a.Y+a.H/2, b.X, b.Y+b.H/2
		out = append(out, edge{X1: x1, Y1: y1, X2: x2, Y2: y2, MX: (x1 + x2) / 2, Class: edgeClass(byID[e.From], byID[e.To])})
	}
	return out
}

// edgeClass styles the edge from a task to one that needs it: failed
// when the need failed it, blocked when it waits on a dead letter.
func edgeClass(from, to task.Task) string {
	switch to.State {
	case task.UpstreamFailed:
		return "edge edge-failed"
	case task.Pending:
		if from.State == task.DeadLetter {
			return "edge edge-blocked"
		}
	}
	return "edge"
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
