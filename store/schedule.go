package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/grit-run/grit/task"
)

// ScheduleRow is a schedule as the store keeps it. The store reads
// neither its declaration nor its state: package schedule writes the one,
// the fleet's tickers the other.
type ScheduleRow struct {
	Name  string
	Def   json.RawMessage // the declaration (schedule.Schedule.Encode)
	State json.RawMessage // what the fleet knows of its slots
	// Due is when a ticker next has work on it; zero: never (paused).
	Due time.Time
	// Version is 1 when the row is made, and one more at each write.
	Version int64
	Updated time.Time // the store's time of the last write
}

// ScheduleWrite is a write of one schedule, made only if no other write
// came first.
type ScheduleWrite struct {
	Name string
	// Version is the version the writer read; 0 makes a schedule that
	// must not exist.
	Version int64
	// Def replaces the declaration; nil keeps it (not allowed when making
	// the row).
	Def json.RawMessage
	// Tasks are enqueued in the write's transaction, as Enqueue would.
	Tasks []task.NewTask
	// Then is called in the transaction, after the tasks are in, with
	// them as Enqueue answers them; it returns the new state and due
	// time. A driver may call it again if it retries the transaction, so
	// it depends on its argument alone.
	Then func(enqueued []task.Enqueued) (state json.RawMessage, due time.Time, err error)
}

// Scheduler is an optional capability: the fleet's schedules, kept in the
// store so that every worker ticks the same ones, and a restarted fleet
// knows the last slot each had.
type Scheduler interface {
	// Schedules lists the schedules by name: all of them, or (dueBy not
	// zero) those due by then.
	Schedules(ctx context.Context, dueBy time.Time) ([]ScheduleRow, error)
	// GetSchedule returns one schedule, or an error matching ErrNotFound.
	GetSchedule(ctx context.Context, name string) (ScheduleRow, error)
	// WriteSchedule writes w in one transaction with its tasks, if the
	// schedule is still at w.Version (or, for 0, does not exist). ok is
	// false, and nothing is written, when another write came first.
	WriteSchedule(ctx context.Context, w ScheduleWrite) (row ScheduleRow, ok bool, err error)
	// DeleteSchedule deletes a schedule (its tasks stay), and reports
	// whether there was one.
	DeleteSchedule(ctx context.Context, name string) (bool, error)
}

// ValidateScheduleWrite checks a write before its transaction.
func ValidateScheduleWrite(w ScheduleWrite) error {
	switch {
	case w.Name == "" || len(w.Name) > 200:
		return invalid("schedule %q: want a name of 1 to 200 characters", w.Name)
	case w.Version < 0:
		return invalid("schedule %q: version %d", w.Name, w.Version)
	case w.Version == 0 && len(w.Def) == 0:
		return invalid("schedule %q: a new schedule needs its declaration", w.Name)
	case w.Then == nil:
		return invalid("schedule %q: no state to write", w.Name)
	}
	for i, t := range w.Tasks {
		if len(t.Needs) > 0 {
			return invalid("schedule %q: task %d: needs are only for tasks of a run", w.Name, i)
		}
		if err := t.Validate(); err != nil {
			return err
		}
	}
	return nil
}
