// Package alert tells operators of what needs them: a task dead-lettered,
// a group's circuit breaker opened, a kind or group held as an outage.
//
// The gate raises the alerts, after the store has recorded what they are
// about, for every claimer (the engine for Go workers, the API server for
// remote workers, the rescue of expired leases). An Alerter carries them
// to a Go callback and a webhook, each from a bounded queue of its own
// drained by its own goroutine, so that a slow or dead receiver never
// holds up the claimer that raised them.
package alert

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/grit-run/grit/task"
)

// Type is what an alert is about.
type Type string

// The alerts' types, as the webhook's JSON spells them.
const (
	// DeadLetter: a task is DEAD_LETTER, waiting for an operator: it
	// failed the same way twice in a row (poison).
	DeadLetter Type = "dead_letter"
	// BreakerOpened: a group's circuit breaker opened (from closed): its
	// tasks wait, or fail fast, while it cools down.
	BreakerOpened Type = "breaker_opened"
	// OutageHeld: many distinct tasks of a kind or group failed alike and
	// none succeeded; the kind or group is held, as an open breaker holds
	// its group, rather than each task dead-lettered.
	OutageHeld Type = "outage_held"
	// SchedulePaused: a schedule paused itself after slots in a row whose
	// tasks failed (its PauseAfter): no slot runs until it is resumed.
	SchedulePaused Type = "schedule_paused"
	// QuarantinedItems: an attempt set items aside (grit.Quarantine) while
	// its task went on; they wait, beside the dead letters, for an
	// operator to replay or drop them. One alert an attempt, with the
	// count (Tasks), however many rows it set aside.
	QuarantinedItems Type = "quarantined"
)

// MaxError bounds an alert's Error, in bytes: a receiver (a chat room, a
// pager) wants the gist, and the task keeps the whole (grit task ID).
const MaxError = 2048

// Event is one alert. The fields that do not apply to its Type are zero.
type Event struct {
	Type Type
	Time time.Time
	// The task, for a dead letter: its id, kind, queue, group, tenant,
	// run (0: none) and the attempts it used.
	TaskID                     int64
	Kind, Queue, Group, Tenant string
	RunID                      int64
	Attempt                    int
	// Fingerprint and Error are the failure's (a dead letter's, an
	// outage's); Error is at most MaxError bytes.
	Fingerprint, Error string
	// Until is when an opened breaker lets a probe through, or when an
	// outage's hold ends; zero when unknown.
	Until time.Time
	// Tasks is how many distinct tasks failed alike, for an outage; how
	// many slots in a row failed, for a schedule that paused itself.
	Tasks int
	// Schedule is the schedule that paused itself.
	Schedule string
	// Summary says what happened in a line, for a human.
	Summary string
	// Link is where an operator looks next: a grit command ("grit task
	// 42"), or a URL under Alerting.DashboardURL when one is set.
	Link string
}

// DeadLettered is the alert for t, recorded DEAD_LETTER at at with the
// failure errMsg, whose fingerprint is fp.
func DeadLettered(t task.Task, errMsg, fp string, at time.Time) Event {
	return Event{
		Type: DeadLetter, Time: at,
		TaskID: t.ID, Kind: t.Kind, Queue: t.Queue, Group: t.Group, Tenant: t.Tenant, RunID: t.RunID, Attempt: t.Attempt,
		Fingerprint: fp, Error: Bounded(errMsg),
		Summary: fmt.Sprintf("task %d (%s) is DEAD_LETTER after %d attempts, waiting for an operator: %s", t.ID, t.Kind, t.Attempt, firstLine(errMsg)),
	}
}

// Quarantined is the alert for the items t's attempt set aside: n new
// ones, the first failing with errMsg, whose fingerprint is fp. An
// attempt raises one, however many rows it set aside.
func Quarantined(t task.Task, n int, fp, errMsg string, at time.Time) Event {
	return Event{
		Type: QuarantinedItems, Time: at,
		TaskID: t.ID, Kind: t.Kind, Queue: t.Queue, Group: t.Group, Tenant: t.Tenant, RunID: t.RunID, Attempt: t.Attempt,
		Fingerprint: fp, Error: Bounded(errMsg), Tasks: n,
		Summary: fmt.Sprintf("task %d (%s) set aside %d item(s) as quarantined, waiting for an operator: %s", t.ID, t.Kind, n, firstLine(errMsg)),
	}
}

// Opened is the alert for group's breaker, opened at at until its first
// probe at until.
func Opened(group string, at, until time.Time) Event {
	return Event{
		Type: BreakerOpened, Time: at, Group: group, Until: until,
		Summary: fmt.Sprintf("group %s: circuit breaker opened: its tasks wait until %s", group, until.UTC().Format(time.RFC3339)),
	}
}

// Outage describes a kind or group held as an outage, for OutageEvent.
type Outage struct {
	// Kind or Group is what is held (one of them).
	Kind, Group string
	// Fingerprint and Error are the failure the tasks share.
	Fingerprint, Error string
	// Tasks is how many distinct tasks failed alike.
	Tasks int
	// Until is when the hold ends; zero when unknown.
	Until time.Time
}

// OutageEvent is the alert for o, held at at.
func OutageEvent(o Outage, at time.Time) Event {
	what := "kind " + o.Kind
	if o.Kind == "" {
		what = "group " + o.Group
	}
	return Event{
		Type: OutageHeld, Time: at, Kind: o.Kind, Group: o.Group, Fingerprint: o.Fingerprint, Error: Bounded(o.Error),
		Until: o.Until, Tasks: o.Tasks,
		Summary: fmt.Sprintf("%s held as an outage: %d tasks failed alike, none succeeded: %s", what, o.Tasks, firstLine(o.Error)),
	}
}

// SchedulePausedEvent is the alert for schedule name, paused at at after
// failed slots in a row, the last task's (t) error errMsg.
func SchedulePausedEvent(name string, failed int, t task.Task, at time.Time) Event {
	return Event{
		Type: SchedulePaused, Time: at, Schedule: name, Tasks: failed,
		TaskID: t.ID, Kind: t.Kind, Queue: t.Queue, Group: t.Group, Tenant: t.Tenant,
		Fingerprint: t.Fingerprint, Error: Bounded(t.LastError),
		Summary: fmt.Sprintf("schedule %s paused itself: %d slots in a row failed, the last (task %d, %s): %s", name, failed, t.ID, t.Kind, firstLine(t.LastError)),
	}
}

// link is where an operator looks next at ev: a grit command, or a page
// under dashboard when it is set.
func link(ev Event, dashboard string) string {
	var cmd, page string
	switch {
	case ev.Type == DeadLetter:
		cmd, page = "grit task "+strconv.FormatInt(ev.TaskID, 10), "/tasks/"+strconv.FormatInt(ev.TaskID, 10)
	case ev.Type == QuarantinedItems:
		cmd, page = "grit dlq list", "/dead-letters"
	case ev.Type == SchedulePaused:
		cmd, page = "grit schedules list", "/schedules#s-"+url.PathEscape(ev.Schedule)
	case ev.Type == OutageHeld && ev.Kind != "":
		cmd, page = "grit tasks --kind "+ev.Kind, "/tasks?kind="+url.QueryEscape(ev.Kind)
	default:
		cmd, page = "grit breakers", "/groups#g-"+url.PathEscape(ev.Group)
	}
	if dashboard == "" {
		return cmd
	}
	return strings.TrimRight(dashboard, "/") + page
}

// Bounded is s cut to at most MaxError bytes, on a character boundary,
// marked with "…" when cut.
func Bounded(s string) string { return cut(s, MaxError) }

// cut is s in at most n bytes, cut on a character boundary and marked.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	at := n - len(mark)
	for at > 0 && !utf8.RuneStart(s[at]) {
		at--
	}
	return s[:at] + mark
}

// firstLine is s's first line, cut short for a summary.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return cut(s, 200)
}
