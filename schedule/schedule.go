// Package schedule declares periodic tasks: a task of a kind enqueued on a
// cron expression or at an interval, in a time zone, with jitter, an
// overlap policy and a catch-up window.
//
// Schedules are kept in the store, with the last slot each has had, so a
// restarted fleet knows what it missed. Every worker ticks them, without
// a leader: a slot's time is part of its task's idempotency key (Key), so
// however many workers enqueue a slot, it has one task. docs/schedules.md
// tells the whole story; this package holds the declaration and the
// arithmetic of slots.
package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// ErrInvalid is matched by the error of a schedule that cannot be kept.
var ErrInvalid = errors.New("schedule: invalid")

// Overlap says what a slot does when the task of an earlier slot of the
// same schedule has not finished.
type Overlap string

const (
	// Skip drops the slot, counting it (the default).
	Skip Overlap = "skip"
	// BufferOne keeps one slot to enqueue as soon as the unfinished task
	// ends; slots that come due while one is kept are dropped.
	BufferOne Overlap = "buffer_one"
	// Allow enqueues the slot anyway.
	Allow Overlap = "allow"
)

// Overlaps lists the overlap policies.
var Overlaps = []Overlap{Skip, BufferOne, Allow}

// Defaults.
const (
	DefaultCatchUp = time.Hour
	// MaxJitter bounds Jitter: a slot's task waits at most a day.
	MaxJitter = 24 * time.Hour
	// MaxPauseAfter bounds PauseAfter.
	MaxPauseAfter = 100
	// MaxNameLen bounds a schedule's name.
	MaxNameLen = 200
)

// Schedule is a periodic task. Exactly one of Cron and Every is set.
type Schedule struct {
	// Name names the schedule in the store, the CLI and its tasks' keys:
	// 1 to 200 letters, digits and - _ . / characters.
	Name string
	// Cron is a cron expression of five fields (minute, hour, day of
	// month, month, day of week), or one of @yearly, @annually,
	// @monthly, @weekly, @daily, @midnight and @hourly.
	Cron string
	// Every is an interval, a whole number of seconds: slots are the
	// multiples of it since midnight UTC of 1 January of year 1 (for an
	// interval that divides a day, the multiples since midnight UTC).
	Every time.Duration
	// Zone is the IANA time zone Cron is read in (e.g. Europe/Paris);
	// default UTC. A daylight-saving change neither skips nor doubles a
	// slot (see Timing.Next).
	Zone string
	// Jitter delays each slot's task by up to this much, by an amount
	// drawn from the schedule's name and the slot (the same on every
	// worker), so that schedules on the same minute spread their load.
	Jitter time.Duration
	// Overlap is what a slot does while an earlier slot's task has not
	// finished; default Skip.
	Overlap Overlap
	// CatchUp is how late a slot may be enqueued after the fleet was
	// down: slots missed within it run once each, older ones are skipped
	// and counted. Default an hour.
	CatchUp time.Duration
	// PauseAfter pauses the schedule after that many slots in a row
	// whose tasks failed (FAILED or DEAD_LETTER), with an alert, as a
	// dead letter has; 0 never pauses it.
	PauseAfter int
	// Task is what each slot enqueues.
	Task Task
}

// Task is the task a schedule enqueues at each slot.
type Task struct {
	Kind        string
	Args        json.RawMessage
	Queue       string
	Group       string
	Tenant      string
	Priority    int
	Policy      string // a retry policy string ("" for the engine's default)
	Timeout     time.Duration
	Grace       time.Duration
	PoisonAfter int
}

// OrDefault is s with its defaults in place: Zone UTC, Overlap Skip,
// CatchUp an hour.
func (s Schedule) OrDefault() Schedule {
	if s.Zone == "" {
		s.Zone = "UTC"
	}
	if s.Overlap == "" {
		s.Overlap = Skip
	}
	if s.CatchUp == 0 {
		s.CatchUp = DefaultCatchUp
	}
	return s
}

// Validate says what is wrong with s, naming the field and what to write,
// as an error matching ErrInvalid; nil when s can be kept.
func (s Schedule) Validate() error {
	if _, err := s.Timing(); err != nil {
		return err
	}
	s = s.OrDefault()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: schedule %q: %s", ErrInvalid, s.Name, fmt.Sprintf(format, args...))
	}
	switch {
	case s.Jitter < 0 || s.Jitter > MaxJitter:
		return bad("jitter %v: want a duration from 0 to 24h", s.Jitter)
	case s.CatchUp < 0:
		return bad("catch_up %v: want a positive duration (default 1h)", s.CatchUp)
	case s.PauseAfter < 0 || s.PauseAfter > MaxPauseAfter:
		return bad("pause_after %d: want 0 (never) to %d failed slots in a row", s.PauseAfter, MaxPauseAfter)
	case !validOverlap(s.Overlap):
		return bad("overlap %q: want skip, buffer_one or allow", s.Overlap)
	}
	if _, err := s.NewTask(time.Unix(0, 0)); err != nil {
		return bad("task: %v", err)
	}
	if s.Task.Policy != "" {
		if _, err := retry.Parse(s.Task.Policy); err != nil {
			return bad("task's policy: %v", err)
		}
	}
	return nil
}

func validOverlap(o Overlap) bool {
	for _, v := range Overlaps {
		if o == v {
			return true
		}
	}
	return false
}

// nameProblem says what is wrong with a schedule's name, or "".
func nameProblem(name string) string {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Sprintf("want a name of 1 to %d characters", MaxNameLen)
	}
	for _, r := range name {
		if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))) && !strings.ContainsRune("-_./", r) {
			return fmt.Sprintf("%q is not allowed: use letters, digits and - _ . /", r)
		}
	}
	return ""
}

// NewTask is the task s enqueues for slot: its idempotency key is Key(s.Name,
// slot), its RunAt the slot delayed by its jitter.
func (s Schedule) NewTask(slot time.Time) (task.NewTask, error) {
	n := task.NewTask{
		Name: s.Name, Kind: s.Task.Kind, Args: s.Task.Args, Queue: s.Task.Queue, Group: s.Task.Group,
		Tenant: s.Task.Tenant, Priority: s.Task.Priority, Policy: s.Task.Policy, Timeout: s.Task.Timeout,
		Grace: s.Task.Grace, PoisonAfter: s.Task.PoisonAfter,
		RunAt: slot.Add(JitterFor(s.Name, s.Jitter, slot)), IdempotencyKey: Key(s.Name, slot),
		// The task of a slot is that slot's, whatever it holds: a
		// declaration changed since does not make it a conflict.
		ReturnExisting: true,
	}
	if err := n.Validate(); err != nil {
		return task.NewTask{}, err
	}
	return n, nil
}

// Encode is s with its defaults, as the store keeps it: the same
// schedule always encodes to the same bytes.
func (s Schedule) Encode() (json.RawMessage, error) {
	s = s.OrDefault()
	if len(s.Task.Args) > 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, s.Task.Args); err != nil {
			return nil, fmt.Errorf("%w: schedule %q: task's args are not JSON: %v", ErrInvalid, s.Name, err)
		}
		s.Task.Args = b.Bytes()
	}
	return json.Marshal(s)
}

// Decode reads a schedule as Encode wrote it.
func Decode(b []byte) (Schedule, error) {
	var s Schedule
	if err := json.Unmarshal(b, &s); err != nil {
		return Schedule{}, fmt.Errorf("schedule: decode: %w", err)
	}
	return s, nil
}
