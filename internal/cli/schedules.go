package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func newSchedulesCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "schedules",
		Short: "list and manage schedules: periodic tasks that the fleet's workers enqueue",
		Long: `Schedules enqueue a task at each slot of a cron expression or an
interval, one task per slot across the fleet (docs/schedules.md). They are
declared in a task file's schedules: section (grit schedules apply FILE,
or grit worker --schedules FILE) or in Go (grit.Config.Schedules), and
kept in the store; every grit worker ticks them. Without a subcommand,
lists them. Pause, resume, trigger, backfill and delete are written to
the store's audit log.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.schedulesList(cmd.Context(), asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(newSchedulesListCmd(e), newSchedulesPauseCmd(e), newSchedulesResumeCmd(e), newSchedulesTriggerCmd(e),
		newSchedulesBackfillCmd(e), newSchedulesDeleteCmd(e), newSchedulesApplyCmd(e))
	return cmd
}

func newSchedulesListCmd(e *env) *cobra.Command {
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "list the schedules with their next slots and last outcomes",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return e.schedulesList(cmd.Context(), asJSON) },
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return list
}

// scheduleDone is what an action on a schedule did: text for people,
// and the value --json prints.
type scheduleDone struct {
	text string
	json any
}

// scheduleNow is the schedule as grit schedules --json shows it, after an
// action: what --json prints for pause and resume.
func scheduleNow(ctx context.Context, st store.Store, name, text string, now time.Time) (scheduleDone, error) {
	v, err := sched.Get(ctx, st, name, now, 3)
	if err != nil {
		return scheduleDone{}, err
	}
	return scheduleDone{text, toScheduleJSON(v)}, nil
}

func newSchedulesPauseCmd(e *env) *cobra.Command {
	var reason string
	var asJSON bool
	pause := &cobra.Command{
		Use:   "pause NAME",
		Short: "pause a schedule: no slot gets a task until it is resumed (the slots between are not caught up)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.scheduleAct(cmd.Context(), "pause", args[0], asJSON, func(ctx context.Context, st store.Store, now time.Time) (scheduleDone, error) {
				r, err := sched.Pause(ctx, st, args[0], cliOperator(), reason, now)
				if err != nil {
					return scheduleDone{}, err
				}
				return scheduleNow(ctx, st, args[0], "paused"+nextNote(r, now), now)
			})
		},
	}
	pause.Flags().StringVar(&reason, "reason", "", "why, for the other operators (shown by list and the dashboard)")
	pause.Flags().BoolVar(&asJSON, "json", false, "print JSON: the schedule after, as grit schedules --json lists it")
	return pause
}

func newSchedulesResumeCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resume NAME",
		Short: "resume a paused schedule from its next slot",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.scheduleAct(cmd.Context(), "resume", args[0], asJSON, func(ctx context.Context, st store.Store, now time.Time) (scheduleDone, error) {
				r, err := sched.Resume(ctx, st, args[0], now)
				if err != nil {
					return scheduleDone{}, err
				}
				return scheduleNow(ctx, st, args[0], "resumed"+nextNote(r, now), now)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the schedule after, as grit schedules --json lists it")
	return cmd
}

func newSchedulesTriggerCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "trigger NAME",
		Short: "enqueue a task of a schedule now, outside its slots and whatever its overlap policy",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.scheduleAct(cmd.Context(), "trigger", args[0], asJSON, func(ctx context.Context, st store.Store, now time.Time) (scheduleDone, error) {
				t, err := sched.Trigger(ctx, st, args[0], now)
				if err != nil {
					return scheduleDone{}, err
				}
				return scheduleDone{fmt.Sprintf("triggered: task %d (grit task %d)", t.ID, t.ID),
					map[string]any{"schedule": args[0], "task": taskView(t)}}, nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print JSON: {"schedule": NAME, "task": {...}}, the task enqueued`)
	return cmd
}

func newSchedulesBackfillCmd(e *env) *cobra.Command {
	var from, to string
	var asJSON bool
	backfill := &cobra.Command{
		Use:   "backfill NAME --from TIME --to TIME",
		Short: "enqueue one task for each slot of a schedule in a time range (at most 1000)",
		Long: `Enqueues one task for each slot of the schedule from --from to --to
(both included), whatever its overlap policy and catch-up window. A slot
whose task is still in the store is not run again: each keeps its own
idempotency key. TIME is RFC 3339 (2026-11-01T02:00:00Z), a date and time
read in the schedule's zone (2026-11-01 or 2026-11-01T02:00), or a
duration before now (6h means six hours ago).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" || to == "" {
				return usageErr("schedules backfill: give --from and --to (e.g. --from 24h --to 0s for the last day)")
			}
			return e.scheduleAct(cmd.Context(), "backfill", args[0], asJSON, func(ctx context.Context, st store.Store, now time.Time) (scheduleDone, error) {
				return backfillSchedule(ctx, st, args[0], from, to, now)
			})
		},
	}
	backfill.Flags().StringVar(&from, "from", "", "the first time of the range")
	backfill.Flags().StringVar(&to, "to", "", "the last time of the range")
	backfill.Flags().BoolVar(&asJSON, "json", false, `print JSON: {"schedule", "from", "to", "slots", "added"}: the slots found, and the tasks added for those that had none`)
	return backfill
}

// backfilled is what grit schedules backfill --json prints.
type backfilled struct {
	Schedule string    `json:"schedule"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Slots    int       `json:"slots"`
	Added    int       `json:"added"`
}

// backfillSchedule enqueues the slots of schedule name from from to to,
// read in its zone, and says how many it found and added.
func backfillSchedule(ctx context.Context, st store.Store, name, from, to string, now time.Time) (scheduleDone, error) {
	v, err := sched.Get(ctx, st, name, now, 0)
	if err != nil {
		return scheduleDone{}, err
	}
	f, err := parseWhen("--from", from, v.Schedule.Zone, now)
	if err != nil {
		return scheduleDone{}, err
	}
	t, err := parseWhen("--to", to, v.Schedule.Zone, now)
	if err != nil {
		return scheduleDone{}, err
	}
	slots, added, err := sched.Backfill(ctx, st, name, f, t, now)
	if err != nil {
		return scheduleDone{}, err
	}
	return scheduleDone{fmt.Sprintf("backfilled %s to %s: %d slots, %d new tasks (%d had theirs)",
		f.UTC().Format(time.RFC3339), t.UTC().Format(time.RFC3339), slots, added, slots-added),
		backfilled{Schedule: name, From: f.UTC(), To: t.UTC(), Slots: slots, Added: added}}, nil
}

func newSchedulesDeleteCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "delete a schedule from the store (its tasks stay; a worker that declares it makes it again)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.scheduleAct(cmd.Context(), "delete", args[0], asJSON, func(ctx context.Context, st store.Store, _ time.Time) (scheduleDone, error) {
				return scheduleDone{"deleted", map[string]any{"schedule": args[0], "deleted": true}}, sched.Delete(ctx, st, args[0])
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print JSON: {"schedule": NAME, "deleted": true}`)
	return cmd
}

// nextNote says when a schedule's next slot comes, if it is not paused.
func nextNote(r store.ScheduleRow, now time.Time) string {
	st, err := sched.StateOf(r)
	if err != nil || st.Paused != nil || st.Next.IsZero() {
		return ""
	}
	return fmt.Sprintf("; next slot %s (in %s)", st.Next.Local().Format(time.DateTime), st.Next.Sub(now).Round(time.Second))
}

// scheduleAct runs an operator's action on schedule name, with the
// store's time, records it in the audit log and prints what it did.
func (e *env) scheduleAct(ctx context.Context, action, name string, asJSON bool, fn func(ctx context.Context, st store.Store, now time.Time) (scheduleDone, error)) error {
	st, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := sched.Of(st); err != nil {
		return fmt.Errorf("schedules %s: the store %s keeps no schedules", action, shownDSN(e.storeDSN))
	}
	now, err := st.Now(ctx)
	if err != nil {
		return storeErr(err)
	}
	done, err := fn(ctx, st, now)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return usageErr("schedules %s: no schedule named %q in the store %s; grit schedules lists those there are", action, name, shownDSN(e.storeDSN))
	case errors.Is(err, schedule.ErrInvalid):
		return &exitError{code: exitUsage, err: fmt.Errorf("schedules %s: %w", action, err)}
	case err != nil:
		return fmt.Errorf("schedules %s: %w", action, err)
	}
	e.audit(ctx, st, "schedule "+action, "schedule "+name, 0, "")
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(done.json)
	}
	fmt.Fprintf(e.stdout, "schedule %s: %s\n", name, done.text)
	return nil
}

// parseWhen reads a backfill's time: RFC 3339, a date (and time) in zone,
// or a duration before now.
func parseWhen(flag, s, zone string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usageErr("%s %q: want RFC 3339 (2026-11-01T02:00:00Z), a date and time in the schedule's zone %s (2026-11-01 or 2026-11-01T02:00), or a duration before now (6h)", flag, s, zone)
}

func (e *env) schedulesList(ctx context.Context, asJSON bool) error {
	st, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := sched.Of(st); err != nil {
		return fmt.Errorf("schedules: the store %s keeps no schedules", shownDSN(e.storeDSN))
	}
	now, err := st.Now(ctx)
	if err != nil {
		return storeErr(err)
	}
	vs, err := sched.List(ctx, st, now, 3)
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]scheduleJSON, 0, len(vs))
		for _, v := range vs {
			out = append(out, toScheduleJSON(v))
		}
		return json.NewEncoder(e.stdout).Encode(out)
	}
	if len(vs) == 0 {
		fmt.Fprintln(e.stdout, "no schedules (declare them in a task file's schedules: section, or in Go; see docs/schedules.md)")
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tWHEN\tTASK\tSTATE\tNEXT\tLAST\tENQUEUED\tMISSED\tOVERLAPPED")
	for _, v := range vs {
		if v.Err != nil {
			fmt.Fprintf(w, "%s\t-\t-\tunreadable: %v\t-\t-\t-\t-\t-\n", v.Schedule.Name, v.Err)
			continue
		}
		next := "-"
		if len(v.NextSlots) > 0 {
			next = v.NextSlots[0].Local().Format(time.DateTime)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\n", v.Schedule.Name, when(v.Schedule), taskOf(v.Schedule),
			stateOf(v.State), next, lastOutcomes(v.State, 5), v.State.Enqueued, v.State.Missed, v.State.Overlapped)
	}
	return w.Flush()
}

// when is a schedule's timing in a few words: "0 2 * * * Europe/Paris",
// "every 30s".
func when(s schedule.Schedule) string {
	if s.Every > 0 {
		return "every " + s.Every.String()
	}
	if s.Zone == "" || s.Zone == "UTC" {
		return s.Cron + " UTC"
	}
	return s.Cron + " " + s.Zone
}

func taskOf(s schedule.Schedule) string {
	out := s.Task.Kind
	if s.Task.Queue != "" && s.Task.Queue != "default" {
		out += " @" + s.Task.Queue
	}
	return out
}

func stateOf(st sched.State) string {
	if p := st.Paused; p != nil {
		out := "paused by " + p.Who
		if p.Reason != "" {
			out += ": " + p.Reason
		}
		return out
	}
	if !st.Buffered.IsZero() {
		return "active, 1 buffered"
	}
	return "active"
}

// lastOutcomes are the newest n slots' outcomes, newest first.
func lastOutcomes(st sched.State, n int) string {
	var out []string
	for i := len(st.Recent) - 1; i >= 0 && len(out) < n; i-- {
		o := string(st.Recent[i].Outcome)
		if o == "" {
			o = "RUNNING"
		}
		out = append(out, o+"#"+strconv.FormatInt(st.Recent[i].Task, 10))
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, " ")
}

// scheduleJSON is a schedule as grit schedules --json prints it.
type scheduleJSON struct {
	Name       string            `json:"name"`
	Schedule   schedule.Schedule `json:"schedule"`
	Paused     *sched.Paused     `json:"paused"`
	NextSlots  []time.Time       `json:"next_slots"`
	Recent     []sched.Slot      `json:"recent"`
	Buffered   *time.Time        `json:"buffered"`
	Enqueued   int64             `json:"enqueued"`
	Missed     int64             `json:"missed"`
	Overlapped int64             `json:"overlapped"`
	Error      string            `json:"error,omitempty"`
}

func toScheduleJSON(v sched.View) scheduleJSON {
	out := scheduleJSON{Name: v.Schedule.Name, Schedule: v.Schedule, Paused: v.State.Paused, NextSlots: v.NextSlots,
		Recent: v.State.Recent, Enqueued: v.State.Enqueued, Missed: v.State.Missed, Overlapped: v.State.Overlapped}
	if !v.State.Buffered.IsZero() {
		out.Buffered = &v.State.Buffered
	}
	if v.Err != nil {
		out.Error = v.Err.Error()
	}
	if out.NextSlots == nil {
		out.NextSlots = []time.Time{}
	}
	if out.Recent == nil {
		out.Recent = []sched.Slot{}
	}
	return out
}
