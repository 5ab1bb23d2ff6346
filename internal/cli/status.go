package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func newStatusCmd(e *env) *cobra.Command {
	var (
		asJSON bool
		lease  string
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "show workers (alive, last heartbeat, tasks held, last claim error) and queues (tasks by state)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := e.durationKnob(knobLease, lease)
			if err != nil {
				return err
			}
			return e.status(cmd.Context(), l, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	leaseFlag(cmd, &lease)
	return cmd
}

// leaseFlag is --lease of the commands that judge whether a worker is
// alive (grit status, grit wait): read with e.durationKnob(knobLease, …).
func leaseFlag(cmd *cobra.Command, lease *string) {
	cmd.Flags().StringVar(lease, "lease", "", "a worker silent for longer than this is not alive (env "+knobLease.env+", default "+knobLease.def+")")
}

type workerStatus struct {
	task.Worker
	Alive bool `json:"alive"`
	Held  int  `json:"held"`
}

type queueStatus struct {
	Queue  string             `json:"queue"`
	Counts map[task.State]int `json:"counts"`
}

type statusReport struct {
	// Store is what the store finds wrong with its database that keeps
	// workers from claiming or slows them (read-only, no autovacuum).
	Store []string `json:"store"`
	// Connections is how the store reaches its database, when it says
	// (a store.Connector).
	Connections *connectionsStatus `json:"connections,omitempty"`
	Workers     []workerStatus     `json:"workers"`
	Queues      []queueStatus      `json:"queues"`
	// Pauses are the paused queues, kinds and tenants.
	Pauses []store.Pause `json:"pauses"`
	// PausedSchedules are the schedules no slot of which runs, by an
	// operator's pause or their own (pause_after).
	PausedSchedules []pausedSchedule `json:"paused_schedules"`
	// Holds are the groups, and the kinds held as an outage, whose work
	// waits for a probe, a ramp or resource pressure, and why.
	Holds []ops.Hold `json:"holds"`
	// Rated are the rates that hold tasks back now: their queue's, kind's,
	// group's or tenant's work waits for its turn.
	Rated []ops.LimitRow `json:"rated"`
	// Unserved are the kinds of work due for a minute or more that no
	// live worker serves: it waits for a worker that does not exist.
	Unserved []ops.UnservedKind `json:"unserved"`
	// ReadStore is the --read-store everything above was read from, with
	// its lag; null when status read the store itself.
	ReadStore *readStoreStatus `json:"read_store"`
}

// readStoreStatus is what grit status says of the --read-store it read.
type readStoreStatus struct {
	DSN string `json:"dsn"` // without its password
	// Lag is how far behind the store it is; null when that could not be
	// told, and Error says why.
	Lag   *ops.Lag `json:"lag"`
	Error string   `json:"error"`
}

type pausedSchedule struct {
	Name string `json:"name"`
	sched.Paused
}

func (e *env) status(ctx context.Context, lease time.Duration, asJSON bool) error {
	st, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	o, ok := st.(store.Overview)
	if !ok {
		return errors.New("status: this store cannot count its tasks (no store.Overview)")
	}
	r, err := buildStatus(ctx, st, o, lease)
	if err != nil {
		return err
	}
	if e.readDSN != "" {
		r.Store, r.ReadStore = e.readStoreStatus(ctx, st)
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(r)
	}
	printStatus(e, r)
	return nil
}

func buildStatus(ctx context.Context, st store.Store, o store.Overview, lease time.Duration) (statusReport, error) {
	var r statusReport
	now, err := st.Now(ctx)
	if err != nil {
		return r, err
	}
	if r.Store, err = statusAdvice(ctx, st); err != nil {
		return r, err
	}
	r.Connections = statusConnections(st)
	if r.Workers, err = statusWorkers(ctx, st, o, now, lease); err != nil {
		return r, err
	}
	if r.Queues, err = statusQueues(ctx, o); err != nil {
		return r, err
	}
	if r.Pauses, err = statusPauses(ctx, st); err != nil {
		return r, err
	}
	if r.PausedSchedules, err = statusPausedSchedules(ctx, st); err != nil {
		return r, err
	}
	gs, err := st.Groups(ctx)
	if err != nil {
		return r, err
	}
	r.Holds = ops.Holds(gs, now)
	limits, err := ops.Limits(ctx, st)
	if err != nil {
		return r, err
	}
	if r.Unserved, err = ops.Unserved(ctx, st, now); err != nil {
		return r, err
	}
	if r.Unserved == nil {
		r.Unserved = []ops.UnservedKind{}
	}
	r.Rated = []ops.LimitRow{}
	for _, l := range limits {
		if l.Rate != nil && l.Waiting > 0 {
			r.Rated = append(r.Rated, l)
		}
	}
	return r, nil
}

// readStoreStatus measures the lag of the read store read behind the
// --store, and returns the store's own advice, in place of the read
// store's: a replica is read-only by nature, which keeps no worker from
// claiming. A store that does not answer leaves both unknown, saying
// why: grit status on a replica still works while its primary is down.
func (e *env) readStoreStatus(ctx context.Context, read store.Store) ([]string, *readStoreStatus) {
	rs := &readStoreStatus{DSN: shownDSN(e.readDSN)}
	primary, err := e.openExisting(ctx)
	if err != nil {
		rs.Error = fmt.Sprintf("the store (--store %s) did not open: %v", shownDSN(e.storeDSN), err)
		return []string{}, rs
	}
	defer primary.Close()
	advice, err := statusAdvice(ctx, primary)
	if err != nil {
		rs.Error = fmt.Sprintf("the store (--store %s): %v", shownDSN(e.storeDSN), err)
		return advice, rs
	}
	lag, err := ops.ReplicaLag(ctx, primary, read)
	if err != nil {
		rs.Error = err.Error()
		return advice, rs
	}
	rs.Lag = &lag
	return advice, rs
}

// statusAdvice is what the store says of itself, if it is an Advisor.
func statusAdvice(ctx context.Context, st store.Store) ([]string, error) {
	out := []string{}
	if a, ok := st.(store.Advisor); ok {
		advice, err := a.Advice(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, advice...)
	}
	return out, nil
}

// statusWorkers are the workers with the tasks each holds, alive if seen
// within a lease of now.
func statusWorkers(ctx context.Context, st store.Store, o store.Overview, now time.Time, lease time.Duration) ([]workerStatus, error) {
	ws, err := st.Workers(ctx)
	if err != nil {
		return nil, err
	}
	held, err := o.Held(ctx)
	if err != nil {
		return nil, err
	}
	var out []workerStatus
	for _, w := range ws {
		out = append(out, workerStatus{Worker: w, Alive: w.Alive(now, lease), Held: held[w.ID]})
	}
	return out, nil
}

// statusQueues are the queues' tasks by state, by queue name.
func statusQueues(ctx context.Context, o store.Overview) ([]queueStatus, error) {
	cs, err := o.QueueCounts(ctx)
	if err != nil {
		return nil, err
	}
	byQueue := map[string]map[task.State]int{}
	for _, c := range cs {
		if byQueue[c.Queue] == nil {
			byQueue[c.Queue] = map[task.State]int{}
		}
		byQueue[c.Queue][c.State] += c.N
	}
	var out []queueStatus
	for q, counts := range byQueue {
		out = append(out, queueStatus{Queue: q, Counts: counts})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Queue < out[j].Queue })
	return out, nil
}

// statusPauses are the store's pauses, if it is a Pauser.
func statusPauses(ctx context.Context, st store.Store) ([]store.Pause, error) {
	out := []store.Pause{}
	if p, ok := st.(store.Pauser); ok {
		ps, err := p.Pauses(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// statusPausedSchedules are the paused schedules, if the store keeps
// schedules.
func statusPausedSchedules(ctx context.Context, st store.Store) ([]pausedSchedule, error) {
	out := []pausedSchedule{}
	if sc, err := sched.Of(st); err == nil {
		rows, err := sc.Schedules(ctx, time.Time{})
		if err != nil {
			return out, err
		}
		for _, row := range rows {
			if s, err := sched.StateOf(row); err == nil && s.Paused != nil {
				out = append(out, pausedSchedule{Name: row.Name, Paused: *s.Paused})
			}
		}
	}
	return out, nil
}

func printStatus(e *env, r statusReport) {
	if rs := r.ReadStore; rs != nil {
		if rs.Lag != nil {
			fmt.Fprintf(e.stdout, "read store %s: %s\n\n", rs.DSN, rs.Lag)
		} else {
			fmt.Fprintf(e.stdout, "read store %s: its lag behind the store is unknown: %s\n\n", rs.DSN, rs.Error)
		}
	}
	for _, s := range r.Store {
		fmt.Fprintf(e.stdout, "store: %s\n", s)
	}
	if len(r.Store) > 0 {
		fmt.Fprintln(e.stdout)
	}
	printConnections(e.stdout, r.Connections)
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "WORKER\tHOST\tPID\tALIVE\tLAST HEARTBEAT\tHELD\tFAILED CLAIMS\tLAST CLAIM ERROR")
	for _, s := range r.Workers {
		lastErr := "-"
		if s.LastError != "" {
			lastErr = s.LastErrorAt.Local().Format("15:04:05") + " " + firstLine(s.LastError)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%v\t%s\t%d\t%d\t%s\n", s.ID, s.Host, s.PID, s.Alive,
			s.LastSeen.Local().Format("2006-01-02 15:04:05"), s.Held, s.Failures, lastErr)
	}
	w.Flush()
	fmt.Fprintln(e.stdout)
	w = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "QUEUE\tTASKS BY STATE")
	for _, q := range r.Queues {
		var parts []string
		for _, s := range task.States {
			if n := q.Counts[s]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", s, n))
			}
		}
		fmt.Fprintf(w, "%s\t%s\n", q.Queue, strings.Join(parts, ", "))
	}
	w.Flush()
	printWaits(e, r)
}

// printWaits prints, a line each, what holds work back: pauses, holds,
// rates, and kinds no live worker serves.
func printWaits(e *env, r statusReport) {
	for _, p := range r.Pauses {
		fmt.Fprintf(e.stdout, "\npaused: %s %s since %s (grit resume %s %s)", p.Scope, p.Name, p.Since.Local().Format("2006-01-02 15:04:05"), p.Scope, p.Name)
	}
	for _, p := range r.PausedSchedules {
		why := ""
		if p.Reason != "" {
			why = ": " + p.Reason
		}
		fmt.Fprintf(e.stdout, "\npaused: schedule %s since %s by %s%s (grit schedules resume %s)", p.Name, p.Since.Local().Format("2006-01-02 15:04:05"), p.Who, why, p.Name)
	}
	for _, h := range r.Holds {
		fmt.Fprintf(e.stdout, "\nheld: %s", h)
	}
	for _, l := range r.Rated {
		fmt.Fprintf(e.stdout, "\nheld: %s %s waits for its rate of %s: about %d tasks (grit limits)", l.Scope, l.Name, l.Rate, l.Waiting)
	}
	for _, u := range r.Unserved {
		fmt.Fprintf(e.stdout, "\nunserved: kind %s: %d or more tasks due since %s, and no live worker serves it: start a worker with a handler for %s",
			u.Kind, u.Tasks, u.Since.Local().Format("2006-01-02 15:04:05"), u.Kind)
	}
	if len(r.Pauses) > 0 || len(r.PausedSchedules) > 0 || len(r.Holds) > 0 || len(r.Rated) > 0 || len(r.Unserved) > 0 {
		fmt.Fprintln(e.stdout)
	}
}
