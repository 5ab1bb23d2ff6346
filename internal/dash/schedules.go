package dash

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The schedules page shows, for each schedule, so many of its next slots
// and of its latest outcomes.
const (
	nextSlots     = 3
	recentOutcome = 10
)

// slotRow is one of a schedule's recent slots as the page shows it.
type slotRow struct {
	sched.Slot
	// State is the task's end, or its state now while it has not ended.
	State task.State
}

// Gone reports whether the slot's task was pruned before it was seen to end.
func (s slotRow) Gone() bool { return s.State == sched.Gone }

type scheduleRow struct {
	sched.View
	Recent []slotRow // newest first
}

// Anchor is the row's id, which alerts link to (/schedules#s-NAME).
func (s scheduleRow) Anchor() string { return "s-" + s.Schedule.Name }

type schedulesData struct {
	Has       bool // the store keeps schedules
	Schedules []scheduleRow
	Paused    int
}

func (d *Dashboard) schedules(w http.ResponseWriter, r *http.Request, v who) error {
	ctx := r.Context()
	if _, err := sched.Of(d.read); err != nil {
		d.render(w, r, v, "schedules", "Schedules", schedulesData{})
		return nil
	}
	now, err := d.read.Now(ctx)
	if err != nil {
		return err
	}
	views, err := sched.List(ctx, d.read, now, nextSlots)
	if err != nil {
		return err
	}
	data := schedulesData{Has: true}
	for _, sv := range views {
		row := scheduleRow{View: sv}
		if sv.State.Paused != nil {
			data.Paused++
		}
		rec := sv.State.Recent
		for i := len(rec) - 1; i >= 0 && len(row.Recent) < recentOutcome; i-- {
			row.Recent = append(row.Recent, slotRow{Slot: rec[i], State: rec[i].Outcome})
		}
		data.Schedules = append(data.Schedules, row)
	}
	if err := d.slotStates(ctx, data.Schedules); err != nil {
		return err
	}
	d.render(w, r, v, "schedules", "Schedules", data)
	return nil
}

// slotStates fills in the state now of the shown slots whose tasks have
// not ended (READY while a jitter delays one, RUNNING, RETRYING), in one
// read of those tasks; a task not found was pruned.
func (d *Dashboard) slotStates(ctx context.Context, rows []scheduleRow) error {
	var ids []int64
	for _, r := range rows {
		for _, sl := range r.Recent {
			if sl.State == "" {
				ids = append(ids, sl.Task)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ts, err := d.read.ListTasks(ctx, task.Filter{IDs: ids})
	if err != nil {
		return err
	}
	now := make(map[int64]task.State, len(ts))
	for _, t := range ts {
		now[t.ID] = t.State
	}
	for i := range rows {
		for j := range rows[i].Recent {
			sl := &rows[i].Recent[j]
			if sl.State != "" {
				continue
			}
			if sl.State = now[sl.Task]; sl.State == "" {
				sl.State = sched.Gone
			}
		}
	}
	return nil
}

// scheduleCounts are the overview's count of schedules and of the paused
// ones, from the store's rows alone; ok is false on a store without
// schedules.
func scheduleCounts(ctx context.Context, st store.Store) (n, paused int, ok bool, err error) {
	sc, err := sched.Of(st)
	if err != nil {
		return 0, 0, false, nil
	}
	rows, err := sc.Schedules(ctx, time.Time{})
	if err != nil {
		return 0, 0, true, err
	}
	for _, row := range rows {
		if s, err := sched.StateOf(row); err == nil && s.Paused != nil {
			paused++
		}
	}
	return len(rows), paused, true, nil
}

// actSchedule pauses, resumes or triggers a schedule.
func (d *Dashboard) actSchedule(w http.ResponseWriter, r *http.Request, v who) error {
	if _, err := sched.Of(d.cfg.Store); err != nil {
		return errBadRequest{"schedules are not available on this store: it keeps none"}
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" {
		return errBadRequest{"no schedule named: the form's name field is empty"}
	}
	a := r.PostFormValue("action")
	if !slices.Contains([]string{"pause", "resume", "trigger"}, a) {
		return errBadRequest{fmt.Sprintf("action %q: want pause, resume or trigger", a)}
	}
	ctx := r.Context()
	now, err := d.cfg.Store.Now(ctx)
	if err != nil {
		return err
	}
	note, detail, changed, err := d.doSchedule(ctx, v, name, a, strings.TrimSpace(r.PostFormValue("reason")), now)
	if errors.Is(err, sched.ErrNotFound) {
		return errNotFound{fmt.Sprintf("schedule %q", name)}
	}
	if err != nil {
		return err
	}
	if changed {
		d.record(ctx, v, a, "schedule "+name, 0, detail)
	}
	http.Redirect(w, r, withQuery("/schedules", "done", "schedule "+name+": "+note)+"#s-"+url.PathEscape(name), http.StatusSeeOther)
	return nil
}

// doSchedule does action a to schedule name, and says what it did, what
// the audit log adds, and whether anything changed.
func (d *Dashboard) doSchedule(ctx context.Context, v who, name, a, reason string, now time.Time) (note, detail string, changed bool, err error) {
	switch a {
	case "pause":
		row, err := sched.Pause(ctx, d.cfg.Store, name, v.Name, reason, now)
		if err != nil {
			return "", "", false, err
		}
		if st, err := sched.StateOf(row); err == nil && st.Paused != nil && !st.Paused.Since.Equal(now) {
			return "was paused already", "", false, nil
		}
		return "paused: no slot gets a task until it is resumed", reason, true, nil
	case "resume":
		row, err := sched.Resume(ctx, d.cfg.Store, name, now)
		if err != nil {
			return "", "", false, err
		}
		if st, err := sched.StateOf(row); err == nil && !st.Resumed.Equal(now) {
			return "was not paused", "", false, nil
		}
		return "resumed from its next slot", "", true, nil
	default:
		t, err := sched.Trigger(ctx, d.cfg.Store, name, now)
		if err != nil {
			return "", "", false, err
		}
		return fmt.Sprintf("triggered task %d (%s)", t.ID, t.State), fmt.Sprintf("task %d", t.ID), true, nil
	}
}
