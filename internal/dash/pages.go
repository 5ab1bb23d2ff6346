package dash

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// pageSize is how many rows a list shows at a time.
const pageSize = 50

// textWindow is how many of the newest tasks a text search looks at when
// nothing else narrows it (a state, a time, a run).
var textWindow int64 = 100_000 // a variable for its test

// allStates are the task states in the order the pages show them.
var allStates = []task.State{task.Pending, task.Ready, task.Running, task.Retrying, task.Sensing,
	task.Success, task.Failed, task.DeadLetter, task.UpstreamFailed, task.Skipped, task.Cancelled}

// queueRow is one queue's tasks by state.
type queueRow struct {
	Queue  string
	Counts map[task.State]int
	Total  int
	// Oldest is how long the queue's oldest due task has waited.
	Oldest    time.Duration
	HasOldest bool
}

type overviewData struct {
	States      []task.State
	Queues      []queueRow
	Totals      map[task.State]int
	Chart       chart
	HasChart    bool
	Workers     int
	Silent      int
	Breakers    []groupRow // open or half-open
	Ramps       []groupRow // closed, ramping up after an outage
	Outages     []groupRow
	DeadLetters []store.DeadLetterGroup
	DeadCount   int
	OldestReady time.Duration
	HasOldest   bool
	// CountedAgo is how old the counts are (see counter).
	CountedAgo time.Duration
	// Pauses are the paused queues, kinds and tenants; CanPause says the
	// store keeps pauses.
	Pauses   []store.Pause
	CanPause bool
	// Schedules and SchedPaused count the store's schedules and the
	// paused ones; HasSchedules says the store keeps them.
	Schedules, SchedPaused int
	HasSchedules           bool
	// Unserved are the kinds of due work no live worker serves.
	Unserved []ops.UnservedKind
}

// QueuePaused reports whether queue q is paused.
func (o overviewData) QueuePaused(q string) bool {
	for _, p := range o.Pauses {
		if p.Scope == store.ScopeQueue && p.Name == q {
			return true
		}
	}
	return false
}

// Stale reports whether the counts are old enough to say so.
func (o overviewData) Stale() bool { return o.CountedAgo > 3*time.Second }

// seriesSince is where the overview's hour of attempts starts, for a
// series read at now.
func seriesSince(now time.Time) time.Time { return now.Add(-time.Hour).Truncate(time.Minute) }

// Total is how many tasks are in state s, over every queue.
func (o overviewData) Total(s string) int { return o.Totals[task.State(s)] }

func (d *Dashboard) overview(w http.ResponseWriter, r *http.Request, v who) error {
	data := overviewData{States: allStates, Totals: map[task.State]int{}}
	for _, fill := range []func(context.Context, *overviewData) error{
		d.overviewCounts, d.overviewAttempts, d.overviewOldest, d.overviewPauses,
		d.overviewSchedules, d.overviewWorkers, d.overviewGroups, d.overviewUnserved,
	} {
		if err := fill(r.Context(), &data); err != nil {
			return err
		}
	}
	d.render(w, r, v, "overview", "Overview", data)
	return nil
}

// overviewUnserved fills in the kinds of due work that no live worker
// serves (ops.Unserved: one bounded walk of the due index).
func (d *Dashboard) overviewUnserved(ctx context.Context, data *overviewData) error {
	now, err := d.cfg.Store.Now(ctx)
	if err != nil {
		return err
	}
	data.Unserved, err = ops.Unserved(ctx, d.cfg.Store, now)
	return err
}

// overviewCounts fills in the queues' tasks by state, as last counted.
func (d *Dashboard) overviewCounts(ctx context.Context, data *overviewData) error {
	if d.counts != nil {
		counts, at, err := d.counts.get(ctx)
		if err != nil {
			return err
		}
		data.Queues, data.CountedAgo = queueRows(counts, data.Totals), time.Since(at)
	}
	data.DeadCount = data.Totals[task.DeadLetter]
	return nil
}

// overviewAttempts fills in the hour's chart of attempts and the largest
// groups of dead letters.
func (d *Dashboard) overviewAttempts(ctx context.Context, data *overviewData) error {
	if d.series == nil {
		return nil
	}
	series, at, err := d.series.get(ctx)
	if err != nil {
		return err
	}
	data.Chart, data.HasChart = attemptChart(series, seriesSince(at), time.Minute), true
	groups, _, err := d.letters.get(ctx)
	if err != nil {
		return err
	}
	data.DeadLetters = groups[:min(len(groups), 5)]
	return nil
}

// overviewOldest fills in how long each queue's oldest due task has
// waited: one short walk of the due index a queue, fresh on every look.
func (d *Dashboard) overviewOldest(ctx context.Context, data *overviewData) error {
	b, ok := d.read.(store.Backlog)
	if !ok || len(data.Queues) == 0 {
		return nil
	}
	var queues []string
	for _, q := range data.Queues {
		queues = append(queues, q.Queue)
	}
	due, err := b.OldestDue(ctx, queues)
	if err != nil {
		return err
	}
	for i, q := range data.Queues {
		if at, ok := due[q.Queue]; ok {
			wait := max(time.Since(at), 0)
			data.Queues[i].Oldest, data.Queues[i].HasOldest = wait, true
			if !data.HasOldest || wait > data.OldestReady {
				data.OldestReady, data.HasOldest = wait, true
			}
		}
	}
	return nil
}

func (d *Dashboard) overviewPauses(ctx context.Context, data *overviewData) error {
	if p, ok := d.read.(store.Pauser); ok {
		ps, err := p.Pauses(ctx)
		if err != nil {
			return err
		}
		data.Pauses, data.CanPause = ps, true
	}
	return nil
}

func (d *Dashboard) overviewSchedules(ctx context.Context, data *overviewData) (err error) {
	data.Schedules, data.SchedPaused, data.HasSchedules, err = scheduleCounts(ctx, d.read)
	return err
}

// overviewWorkers counts the active workers, seen within a lease or
// silent.
func (d *Dashboard) overviewWorkers(ctx context.Context, data *overviewData) error {
	ws, err := d.read.Workers(ctx)
	if err != nil {
		return err
	}
	for _, wk := range ws {
		switch {
		case wk.Alive(time.Now(), d.cfg.Lease):
			data.Workers++
		case wk.Active:
			data.Silent++
		}
	}
	return nil
}

// overviewGroups fills in the groups whose breaker is not closed or
// ramps up after closing, and those in an outage.
func (d *Dashboard) overviewGroups(ctx context.Context, data *overviewData) error {
	rows, err := d.groupRows(ctx)
	if err != nil {
		return err
	}
	for _, g := range rows {
		switch {
		case g.State != breaker.Closed:
			data.Breakers = append(data.Breakers, g)
		case g.Ramp > 0:
			data.Ramps = append(data.Ramps, g)
		}
		if g.Outage != nil {
			data.Outages = append(data.Outages, g)
		}
	}
	return nil
}

func queueRows(counts []store.QueueCount, totals map[task.State]int) []queueRow {
	byQueue := map[string]*queueRow{}
	for _, c := range counts {
		q, ok := byQueue[c.Queue]
		if !ok {
			q = &queueRow{Queue: c.Queue, Counts: map[task.State]int{}}
			byQueue[c.Queue] = q
		}
		q.Counts[c.State] += c.N
		q.Total += c.N
		totals[c.State] += c.N
	}
	var out []queueRow
	for _, name := range slices.Sorted(maps.Keys(byQueue)) {
		out = append(out, *byQueue[name])
	}
	return out
}

// taskFilter is the tasks page's filter, as its query string holds it.
type taskFilter struct {
	States            []task.State
	Kind, Name, Queue string
	Group, Tenant     string
	Fingerprint, Q    string
	Run               int64
	From, To          string // datetime-local values
	Before, After     int64
	from, to          time.Time
}

// parseTaskFilter reads the tasks page's query; a bad value is an error
// that names it.
func parseTaskFilter(q url.Values) (taskFilter, error) {
	f := taskFilter{
		Kind: q.Get("kind"), Name: q.Get("name"), Queue: q.Get("queue"), Group: q.Get("group"), Tenant: q.Get("tenant"),
		Fingerprint: q.Get("fingerprint"), Q: q.Get("q"), From: q.Get("from"), To: q.Get("to"),
	}
	for _, s := range q["state"] {
		for _, one := range strings.Split(s, ",") {
			if one == "" {
				continue
			}
			st := task.State(strings.ToUpper(one))
			if !st.Valid() {
				return f, errBadRequest{fmt.Sprintf("state %q is not a task state: want one of %s", one, joinStates(allStates))}
			}
			f.States = append(f.States, st)
		}
	}
	ints := map[string]*int64{"run": &f.Run, "before": &f.Before, "after": &f.After}
	for name, dst := range ints {
		if s := q.Get(name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				return f, errBadRequest{fmt.Sprintf("%s %q is not a task or run id: want a whole number", name, s)}
			}
			*dst = n
		}
	}
	for _, t := range []struct {
		name string
		s    string
		dst  *time.Time
	}{{"from", f.From, &f.from}, {"to", f.To, &f.to}} {
		if t.s == "" {
			continue
		}
		at, err := parseLocal(t.s)
		if err != nil {
			return f, errBadRequest{fmt.Sprintf("%s %q is not a time: want 2026-11-25T14:30 (local time) or RFC 3339", t.name, t.s)}
		}
		*t.dst = at
	}
	return f, nil
}

func parseLocal(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Parse(time.RFC3339, s)
}

func joinStates(ss []task.State) string {
	var b []string
	for _, s := range ss {
		b = append(b, string(s))
	}
	return strings.Join(b, ", ")
}

// store is f as a task.Filter, newest first.
func (f taskFilter) store() task.Filter {
	return task.Filter{
		RunID: f.Run, States: f.States, Kind: f.Kind, Name: f.Name, Queue: f.Queue, Group: f.Group, Tenant: f.Tenant,
		Fingerprint: f.Fingerprint, Text: f.Q, CreatedFrom: f.from, CreatedTo: f.to,
	}
}

// query is f's query string, without paging.
func (f taskFilter) query() url.Values {
	q := url.Values{}
	for _, s := range f.States {
		q.Add("state", string(s))
	}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("kind", f.Kind)
	set("name", f.Name)
	set("queue", f.Queue)
	set("group", f.Group)
	set("tenant", f.Tenant)
	set("fingerprint", f.Fingerprint)
	set("q", f.Q)
	set("from", f.From)
	set("to", f.To)
	if f.Run != 0 {
		q.Set("run", strconv.FormatInt(f.Run, 10))
	}
	return q
}

// Describe is f in words, for the audit log and the bulk form.
func (f taskFilter) Describe() string {
	q := f.query()
	if len(q) == 0 {
		return "every task"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(q)) {
		parts = append(parts, k+"="+strings.Join(q[k], ","))
	}
	return strings.Join(parts, " ")
}

func (f taskFilter) HasState(s task.State) bool { return slices.Contains(f.States, s) }

type tasksData struct {
	Filter taskFilter
	States []task.State
	Tasks  []task.Task
	Query  string // the filter's query string
	Newer  string // the link to newer tasks, if any
	Older  string // the link to older tasks, if any
	Cancel bool   // the filter selects tasks a cancel applies to
	Replay bool   // the filter selects dead letters
	Retry  bool   // the filter selects FAILED or CANCELLED tasks
	Delete bool   // the filter selects tasks a delete applies to
	// Bounded says a text search alone looked at the newest Window tasks.
	Bounded bool
	Window  int64
	// More says the filter selects more tasks than the page shows.
	More bool
	// Matching is how many tasks the filter selects, when Counted: at
	// most countCap, and Over says there are more.
	Matching      int
	Counted, Over bool
	CountLink     string // the page again, counting them
}

// countCap bounds the tasks the tasks page counts, when asked to, for
// "all N matching": each is read, so the count stops there.
const countCap = 100_000

// countMatching counts, up to countCap, the tasks f selects, a page of
// ids at a time; over says there are more.
func (d *Dashboard) countMatching(ctx context.Context, f task.Filter) (n int, over bool, err error) {
	f.Newest, f.BeforeID, f.Limit = false, 0, 1000
	for n < countCap {
		ts, err := d.read.ListTasks(ctx, f)
		if err != nil {
			return 0, false, err
		}
		n += len(ts)
		if len(ts) < f.Limit {
			return n, false, nil
		}
		f.AfterID = ts[len(ts)-1].ID
	}
	return countCap, true, nil
}

func (d *Dashboard) tasks(w http.ResponseWriter, r *http.Request, v who) error {
	f, err := parseTaskFilter(r.URL.Query())
	if err != nil {
		return err
	}
	sf := f.store()
	sf.Limit = pageSize + 1
	if f.After > 0 { // newer: the oldest first above After, shown newest first
		sf.AfterID = f.After
	} else {
		sf.Newest, sf.BeforeID = true, f.Before
	}
	bounded := false
	if f.Q != "" && len(f.States) == 0 && f.from.IsZero() && f.to.IsZero() && f.Run == 0 {
		// A text matches from no index: alone, it would read every task
		// (half a second on a million). It searches the newest
		// textWindow tasks then, and the page says so.
		newest, err := d.read.ListTasks(r.Context(), task.Filter{Newest: true, Limit: 1})
		if err != nil {
			return err
		}
		if len(newest) == 1 && newest[0].ID > textWindow {
			sf.AfterID, bounded = max(sf.AfterID, newest[0].ID-textWindow), true
		}
	}
	ts, err := d.read.ListTasks(r.Context(), sf)
	if err != nil {
		return err
	}
	more := len(ts) > pageSize
	ts = ts[:min(len(ts), pageSize)]
	if f.After > 0 {
		slices.Reverse(ts)
	}
	data := tasksData{Filter: f, States: allStates, Tasks: ts, Query: f.query().Encode(), Bounded: bounded, Window: textWindow}
	if len(ts) > 0 {
		q := f.query()
		if more || f.After > 0 {
			q.Set("before", strconv.FormatInt(ts[len(ts)-1].ID, 10))
			data.Older = "/tasks?" + q.Encode()
		}
		q = f.query()
		if f.Before > 0 || (f.After > 0 && more) {
			q.Set("after", strconv.FormatInt(ts[0].ID, 10))
			data.Newer = "/tasks?" + q.Encode()
		}
	}
	data.Replay = len(f.States) == 1 && f.States[0] == task.DeadLetter
	data.Cancel = len(f.States) > 0 && !slices.ContainsFunc(f.States, task.State.Terminal)
	data.Retry = len(f.States) > 0 && !slices.ContainsFunc(f.States, func(s task.State) bool { return s != task.Failed && s != task.Cancelled })
	data.Delete = len(f.States) > 0 && f.Run == 0 && !slices.ContainsFunc(f.States, func(s task.State) bool { return !store.Deletable(s) })
	if err := d.countTasks(r, f, more, &data); err != nil {
		return err
	}
	d.render(w, r, v, "tasks", "Tasks", data)
	return nil
}

// countTasks says how many tasks the filter selects: those shown, when
// they are all, or, asked (count=1), a bounded count of them all, which
// the bulk actions' confirmation repeats. (Counting reads every task it
// counts: only when asked.)
func (d *Dashboard) countTasks(r *http.Request, f taskFilter, more bool, data *tasksData) error {
	data.More = more || f.Before > 0 || f.After > 0
	q := f.query()
	q.Set("count", "1")
	data.CountLink = "/tasks?" + q.Encode() + "#bulk"
	switch {
	case !data.More:
		data.Matching, data.Counted = len(data.Tasks), true
	case r.URL.Query().Get("count") != "":
		n, over, err := d.countMatching(r.Context(), f.store())
		if err != nil {
			return err
		}
		data.Matching, data.Over, data.Counted = n, over, true
	}
	return nil
}

type taskData struct {
	Task     task.Task
	Attempts []task.Attempt
	Timeline timeline
	Output   string
	OutputOf int
	Run      *task.Run
	Actions  []string
	Steps    []task.Step // its handler's recorded steps (grit.Step)
}

func (d *Dashboard) task(w http.ResponseWriter, r *http.Request, v who) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errBadRequest{fmt.Sprintf("task %q: want a task id, a whole number", r.PathValue("id"))}
	}
	ctx := r.Context()
	t, err := d.read.GetTask(ctx, id)
	if errors.Is(err, task.ErrNotFound) {
		return errNotFound{fmt.Sprintf("task %d", id)}
	}
	if err != nil {
		return err
	}
	as, err := d.read.Attempts(ctx, id)
	if err != nil {
		return err
	}
	data := taskData{Task: t, Attempts: as, Timeline: attemptTimeline(as, time.Now()), Actions: actionsFor(t)}
	if sp, ok := d.read.(store.Stepper); ok {
		if data.Steps, err = sp.Steps(ctx, id); err != nil {
			return err
		}
	}
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].Output != "" {
			data.Output, data.OutputOf = tail(as[i].Output, 64<<10), as[i].Number
			break
		}
	}
	if t.RunID != 0 {
		if run, err := d.read.GetRun(ctx, t.RunID); err == nil {
			data.Run = &run
		}
	}
	d.render(w, r, v, "task", fmt.Sprintf("Task %d", id), data)
	return nil
}

// actionsFor are the actions an operator can take on t.
func actionsFor(t task.Task) []string {
	switch s := t.State; {
	case s == task.DeadLetter:
		return []string{string(task.ActReplay), string(task.ActSkip), string(task.ActFail)}
	case !s.Terminal():
		return []string{string(task.ActCancel)}
	case (s == task.Failed || s == task.Cancelled) && t.RunID == 0:
		return []string{string(task.ActRetry)} // a run's tasks are retried with their run
	}
	return nil
}

// tail is the last n bytes of s, from a line's start when it can.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return "…\n" + s
}

type runsData struct {
	Runs  []task.Run
	Older string
	Has   bool
	// Progress is each run's, by id (ops.ProgressOf), when the store
	// counts runs' tasks.
	Progress map[int64]ops.RunProgress
}

func (d *Dashboard) runs(w http.ResponseWriter, r *http.Request, v who) error {
	c, ok := d.read.(store.Console)
	if !ok {
		d.render(w, r, v, "runs", "Runs", runsData{})
		return nil
	}
	var before int64
	if s := r.URL.Query().Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errBadRequest{fmt.Sprintf("before %q: want a run id", s)}
		}
		before = n
	}
	rs, err := c.ListRuns(r.Context(), task.RunFilter{BeforeID: before, Limit: pageSize + 1})
	if err != nil {
		return err
	}
	data := runsData{Runs: rs[:min(len(rs), pageSize)], Has: true}
	if len(rs) > pageSize {
		data.Older = fmt.Sprintf("/runs?before=%d", data.Runs[len(data.Runs)-1].ID)
	}
	if data.Progress, err = runsProgress(r.Context(), c, data.Runs); err != nil {
		return err
	}
	d.render(w, r, v, "runs", "Runs", data)
	return nil
}

// runsProgress is the progress of each of runs, from one count of their
// tasks by state.
func runsProgress(ctx context.Context, c store.Console, runs []task.Run) (map[int64]ops.RunProgress, error) {
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	counts, err := c.RunCounts(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]ops.RunProgress, len(runs))
	for _, r := range runs {
		out[r.ID] = ops.ProgressOf(r.State, counts[r.ID])
	}
	return out, nil
}

type runData struct {
	Run    task.Run
	Graph  dag
	Tasks  []task.Task
	Counts map[task.State]int
	States []task.State
	// Redrive says that the run ended without succeeding, so that an
	// operator may redrive it (store.Store.Redrive).
	Redrive bool
	// Progress is how far it has come, and whether a dead letter blocks
	// it.
	Progress ops.RunProgress
	// Timeline is its tasks' attempts over time (the first
	// runTimelineTasks tasks).
	Timeline timeline
}

func (d *Dashboard) run(w http.ResponseWriter, r *http.Request, v who) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errBadRequest{fmt.Sprintf("run %q: want a run id, a whole number", r.PathValue("id"))}
	}
	ctx := r.Context()
	run, err := d.read.GetRun(ctx, id)
	if errors.Is(err, task.ErrNotFound) {
		return errNotFound{fmt.Sprintf("run %d", id)}
	}
	if err != nil {
		return err
	}
	ts, err := d.read.ListTasks(ctx, task.Filter{RunID: id})
	if err != nil {
		return err
	}
	edges, err := d.read.Edges(ctx, id)
	if err != nil {
		return err
	}
	data := runData{Run: run, Tasks: ts, Graph: layoutDAG(ts, edges), Counts: map[task.State]int{}, States: allStates,
		Redrive: run.State == task.Failed || run.State == task.Cancelled}
	for _, t := range ts {
		data.Counts[t.State]++
	}
	data.Progress = ops.ProgressOf(run.State, data.Counts)
	if data.Timeline, err = d.runTimeline(ctx, ts); err != nil {
		return err
	}
	d.render(w, r, v, "run", fmt.Sprintf("Run %d · %s", id, run.Name), data)
	return nil
}

// runTimeline reads the attempts of a run's first runTimelineTasks tasks
// and lays them on one time axis.
func (d *Dashboard) runTimeline(ctx context.Context, ts []task.Task) (timeline, error) {
	as := map[int64][]task.Attempt{}
	for _, t := range ts[:min(len(ts), runTimelineTasks)] {
		got, err := d.read.Attempts(ctx, t.ID)
		if err != nil {
			return timeline{}, err
		}
		as[t.ID] = got
	}
	now, err := d.read.Now(ctx)
	if err != nil {
		return timeline{}, err
	}
	return runTimeline(ts, as, now), nil
}

func (d *Dashboard) deadLetters(w http.ResponseWriter, r *http.Request, v who) error {
	var data deadLettersData
	if c, ok := d.read.(store.Console); ok {
		var err error
		if data.Letters, err = c.DeadLetterGroups(r.Context()); err != nil {
			return err
		}
	}
	q := r.URL.Query()
	var after int64
	if s := q.Get("after"); s != "" {
		var err error
		if after, err = strconv.ParseInt(s, 10, 64); err != nil || after < 0 {
			return errBadRequest{fmt.Sprintf("after %q: want the id of the last item of the page before", s)}
		}
	}
	var err error
	if data.Quarantine, err = d.quarantined(r.Context(), q.Get("fingerprint"), after); err != nil {
		return err
	}
	d.render(w, r, v, "deadletters", "Dead letters", data)
	return nil
}

// groupRow is one group as the groups page shows it.
type groupRow struct {
	Name      string
	State     breaker.State
	Failures  int
	Attempts  int
	Opens     int
	NextProbe time.Time
	Budget    float64
	Pressure  store.Pressure
	Limit     int
	Running   int
	FailFast  bool
	Outage    *store.Outage
	Own       bool    // settings of its own
	Ramp      float64 // the calls a second its ramp lets through, while it ramps up
}

func (d *Dashboard) groupRows(ctx context.Context) ([]groupRow, error) {
	gb, ok := d.read.(store.GroupBreakers)
	if !ok {
		return nil, nil
	}
	gs, err := gb.Groups(ctx)
	if err != nil {
		return nil, err
	}
	now, err := d.read.Now(ctx)
	if err != nil {
		return nil, err
	}
	var out []groupRow
	for _, name := range slices.Sorted(maps.Keys(gs)) {
		g := gs[name]
		var s breaker.Settings
		if g.Settings != nil {
			s = *g.Settings
		}
		row := groupRow{
			Name: name, State: cmp.Or(g.Circuit.State, breaker.Closed), Opens: g.Circuit.Opens,
			NextProbe: g.Circuit.NextProbe(), Budget: g.Budget.Tokens, Pressure: g.Pressure,
			Limit: g.Limit, FailFast: g.FailFast, Outage: g.Outage, Own: g.Settings != nil,
		}
		row.Failures, row.Attempts = s.Counts(g.Circuit, now)
		if h, ok := ops.HoldOf(name, g, now); ok && h.Wait == ops.WaitRamp {
			row.Ramp = h.Rate
		}
		out = append(out, row)
	}
	return out, nil
}

func (d *Dashboard) groups(w http.ResponseWriter, r *http.Request, v who) error {
	rows, err := d.groupRows(r.Context())
	if err != nil {
		return err
	}
	for i := range rows {
		if strings.HasPrefix(rows[i].Name, "kind:") {
			continue
		}
		// The running attempts of a group: a page of them at most, read
		// through the state index.
		ts, err := d.read.ListTasks(r.Context(), task.Filter{States: []task.State{task.Running}, Group: rows[i].Name, Limit: 1000})
		if err != nil {
			return err
		}
		rows[i].Running = len(ts)
	}
	d.render(w, r, v, "groups", "Groups", rows)
	return nil
}

type workerRow struct {
	task.Worker
	Held   int
	Silent bool
}

func (d *Dashboard) workers(w http.ResponseWriter, r *http.Request, v who) error {
	ws, err := d.read.Workers(r.Context())
	if err != nil {
		return err
	}
	held := map[string]int{}
	if o, ok := d.read.(store.Overview); ok {
		if held, err = o.Held(r.Context()); err != nil {
			return err
		}
	}
	var rows []workerRow
	for _, wk := range ws {
		if !wk.Active && held[wk.ID] == 0 && time.Since(wk.LastSeen) > 24*time.Hour {
			continue // long gone
		}
		rows = append(rows, workerRow{Worker: wk, Held: held[wk.ID], Silent: wk.Active && !wk.Alive(time.Now(), d.cfg.Lease)})
	}
	slices.SortFunc(rows, func(a, b workerRow) int {
		if a.Active != b.Active {
			if a.Active {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	d.render(w, r, v, "workers", "Workers", rows)
	return nil
}

type auditData struct {
	Entries []store.AuditEntry
	Older   string
	Has     bool
}

func (d *Dashboard) audit(w http.ResponseWriter, r *http.Request, v who) error {
	a, ok := d.read.(store.Auditor)
	if !ok {
		d.render(w, r, v, "audit", "Audit log", auditData{})
		return nil
	}
	var before int64
	if s := r.URL.Query().Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errBadRequest{fmt.Sprintf("before %q: want an entry id", s)}
		}
		before = n
	}
	es, err := a.AuditLog(r.Context(), before, pageSize+1)
	if err != nil {
		return err
	}
	data := auditData{Entries: es[:min(len(es), pageSize)], Has: true}
	if len(es) > pageSize {
		data.Older = fmt.Sprintf("/audit?before=%d", data.Entries[len(data.Entries)-1].ID)
	}
	d.render(w, r, v, "audit", "Audit log", data)
	return nil
}
