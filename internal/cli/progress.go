package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/grit-run/grit/internal/engine"
	"github.com/grit-run/grit/task"
)

// progress prints a run's transitions: the engine's events as they happen,
// and the changes the store makes on its own (a dependent becoming READY or
// UPSTREAM_FAILED) as the run is polled. On a terminal it also keeps a
// status line of counts by state at the bottom.
type progress struct {
	mu      sync.Mutex
	out     io.Writer
	runID   int64
	quiet   bool
	tty     bool
	seen    map[int64]task.State
	names   map[int64]string
	counts  string
	changed chan struct{}
}

func newProgress(e *env, runID int64, quiet bool) *progress {
	return &progress{
		out: e.stdout, runID: runID, quiet: quiet, tty: isTerminal(e.stdout),
		seen: map[int64]task.State{}, names: map[int64]string{}, changed: make(chan struct{}, 1),
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// event prints a change the engine made.
func (p *progress) event(ev engine.Event) {
	if ev.Task.RunID != p.runID {
		return
	}
	p.mu.Lock()
	p.seen[ev.Task.ID] = ev.Task.State
	p.line(ev.Time, ev.Task, ev.Attempt)
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// poll prints the changes a poll of the run shows that no event told.
func (p *progress) poll(ts []task.Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	counts := map[task.State]int{}
	for _, t := range ts {
		counts[t.State]++
		p.names[t.ID] = t.Name
		if prev, ok := p.seen[t.ID]; ok && prev == t.State {
			continue
		}
		p.seen[t.ID] = t.State
		if t.State != task.Pending {
			p.line(now, t, task.Attempt{})
		}
	}
	p.counts = formatCounts(counts, len(ts))
	p.status()
}

// line prints one transition, e.g.
// 12:00:01.2 settle RETRYING attempt=2 next=12:00:03.4 exit=1 fp=4a7c1d
// (and "outage: held" when the failure was judged an outage, "deferred=N"
// when resource pressure deferred the task for the N-th time)
func (p *progress) line(at time.Time, t task.Task, a task.Attempt) {
	if p.quiet {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", at.Format("15:04:05.0"), t.Name, t.State)
	if t.Attempt > 0 || a.Number > 0 {
		fmt.Fprintf(&b, " attempt=%d", max(t.Attempt, a.Number))
	}
	if t.State.Waiting() && !t.NextAt.IsZero() && t.NextAt.After(at) {
		fmt.Fprintf(&b, " next=%s", t.NextAt.Format("15:04:05.0"))
	}
	if a.ExitCode != nil && a.Signal == "" && t.State != task.Success {
		fmt.Fprintf(&b, " exit=%d", *a.ExitCode)
	}
	if a.Signal != "" {
		fmt.Fprintf(&b, " signal=%s", a.Signal)
	}
	if a.Outcome == task.OutcomeTimeout {
		b.WriteString(" timeout")
	}
	if a.Class == "resource" && t.State.Waiting() && t.Deferrals > 0 { // the attempt was given back
		fmt.Fprintf(&b, " deferred=%d", t.Deferrals)
	}
	if a.Fingerprint != "" && a.Class == "unclassified" {
		fmt.Fprintf(&b, " fp=%s", short(a.Fingerprint))
	}
	if a.Decision == "outage" { // many tasks fail alike: held, not dead-lettered
		b.WriteString(" outage: held")
	}
	if t.State == task.Success && !a.StartedAt.IsZero() {
		fmt.Fprintf(&b, " took=%s", a.EndedAt.Sub(a.StartedAt).Round(time.Millisecond))
	}
	if (t.State == task.Failed || t.State == task.DeadLetter) && t.LastError != "" {
		fmt.Fprintf(&b, " error=%q", firstLine(t.LastError))
	}
	p.clearStatus()
	fmt.Fprintln(p.out, b.String())
	p.status()
}

func (p *progress) notef(format string, args ...any) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearStatus()
	fmt.Fprintf(p.out, format+"\n", args...)
	p.status()
}

func (p *progress) status() {
	if p.tty && !p.quiet && p.counts != "" {
		fmt.Fprint(p.out, "\r\033[K"+p.counts)
	}
}

func (p *progress) clearStatus() {
	if p.tty && !p.quiet && p.counts != "" {
		fmt.Fprint(p.out, "\r\033[K")
	}
}

// done removes the status line before the summary.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearStatus()
	p.counts = ""
}

func formatCounts(counts map[task.State]int, total int) string {
	parts := []string{}
	for _, s := range task.States {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return fmt.Sprintf("[%d tasks: %s]", total, strings.Join(parts, ", "))
}

func short(fp string) string {
	if len(fp) > 6 {
		return fp[:6]
	}
	return fp
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
