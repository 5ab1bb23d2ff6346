package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func newTaskCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "task ID",
		Short: "show a task and its attempt history, from the store (grit get asks a grit server)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			return e.showTask(cmd.Context(), id, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the task, its attempts, steps and messages kept")
	return cmd
}

func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErr("%q is not a task id (a positive number, as grit tasks shows)", s)
	}
	return id, nil
}

// noTask says that no task has id in the --store, and where to look.
func (e *env) noTask(id int64) string {
	return fmt.Sprintf("no task has id %d in the store %s (grit tasks lists them)", id, shownDSN(e.storeDSN))
}

func (e *env) showTask(ctx context.Context, id int64, asJSON bool) error {
	st, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	t, err := st.GetTask(ctx, id)
	if errors.Is(err, task.ErrNotFound) {
		return usageErr("%s", e.noTask(id))
	}
	if err != nil {
		return err
	}
	as, err := st.Attempts(ctx, id)
	if err != nil {
		return err
	}
	steps, err := st.Steps(ctx, id)
	if err != nil {
		return err
	}
	msgs, err := messagesOf(ctx, st, id)
	if err != nil {
		return err
	}
	if asJSON {
		if steps == nil {
			steps = []task.Step{}
		}
		return json.NewEncoder(e.stdout).Encode(struct {
			Task     taskJSON       `json:"task"`
			Attempts []attemptJSON  `json:"attempts"`
			Steps    []task.Step    `json:"steps"`
			Messages []task.Message `json:"messages"`
		}{taskView(t), attemptViews(as), steps, msgs})
	}
	printTask(e, t, as)
	printSteps(e, steps)
	printMessages(e, msgs)
	return nil
}

// messagesOf is the messages kept for a task and not yet received (none
// with a store that keeps none).
func messagesOf(ctx context.Context, st any, id int64) ([]task.Message, error) {
	mb, ok := st.(store.Mailbox)
	if !ok {
		return []task.Message{}, nil
	}
	msgs, err := mb.Messages(ctx, id)
	if msgs == nil {
		msgs = []task.Message{}
	}
	return msgs, err
}

// printMessages prints the messages kept for a task, oldest first.
func printMessages(e *env, msgs []task.Message) {
	if len(msgs) == 0 {
		return
	}
	fmt.Fprintln(e.stdout, "\nmessages (kept until a handler of the task receives them, oldest first by topic):")
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  ID\tTOPIC\tSENT\tPAYLOAD")
	for _, m := range msgs {
		fmt.Fprintf(w, "  %d\t%s\t%s\t%s\n", m.ID, m.Topic, m.SentAt.Local().Format("15:04:05.000"), clip(string(m.Payload), 80))
	}
	w.Flush()
}

// printSteps prints a task's recorded steps (grit.Step), by the attempt
// that ran each.
func printSteps(e *env, steps []task.Step) {
	if len(steps) == 0 {
		return
	}
	fmt.Fprintln(e.stdout, "\nsteps (recorded: a later attempt answers them without running them):")
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  #\tSTEP\tBY ATTEMPT\tRECORDED\tRESULT")
	for _, s := range steps {
		name := s.Name
		if s.Occurrence > 1 {
			name += " (" + strconv.Itoa(s.Occurrence) + ")"
		}
		fmt.Fprintf(w, "  %d\t%s\t%d\t%s\t%s\n", s.Seq, name, s.Attempt, s.RecordedAt.Local().Format("15:04:05.000"), clip(string(s.Result), 80))
	}
	w.Flush()
}

// clip is s in at most n characters, marked when cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func printTask(e *env, t task.Task, as []task.Attempt) {
	printTaskFields(e.stdout, t)
	fmt.Fprintln(e.stdout)
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "#\tSTARTED\tTOOK\tOUTCOME\tEXIT\tCLASS\tFP\tDECISION\tDELAY\tERROR")
	for _, a := range as {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Number, a.StartedAt.Local().Format("15:04:05.000"),
			took(a), a.Outcome, exitText(a), orDash(a.Class), orDash(short(a.Fingerprint)), orDash(a.Decision), delayText(a.Delay), firstLine(a.Error))
	}
	w.Flush()
	for _, a := range as {
		if a.TimeoutSource != "" {
			fmt.Fprintf(e.stdout, "attempt %d: timeout %s (%s)\n", a.Number, retry.FormatDuration(a.Timeout), a.TimeoutSource)
		}
	}
	for _, a := range as {
		if a.Output != "" {
			fmt.Fprintf(e.stdout, "\nattempt %d output:\n%s\n", a.Number, strings.TrimRight(a.Output, "\n"))
		}
	}
}

// printTaskFields prints a task's own fields, one a line, as grit task
// and grit get show them.
func printTaskFields(out io.Writer, t task.Task) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "task\t%d %s\n", t.ID, orDash(t.Name))
	fmt.Fprintf(w, "kind\t%s\n", t.Kind)
	fmt.Fprintf(w, "state\t%s\n", t.State)
	fmt.Fprintf(w, "attempts\t%d\n", t.Attempt)
	if t.Snoozes > 0 {
		fmt.Fprintf(w, "snoozes\t%d (not counted in attempts)\n", t.Snoozes)
	}
	if t.Deferrals > 0 {
		fmt.Fprintf(w, "deferrals\t%d (resource pressure; not counted in attempts)\n", t.Deferrals)
	}
	if t.Waits > 0 {
		fmt.Fprintf(w, "waits\t%d (claims given back before they began: a retry budget, a limit, a hold; not attempts)\n", t.Waits)
	}
	if t.Origin != "" {
		fmt.Fprintf(w, "origin\t%s\n", t.Origin)
	}
	if t.Policy != "" {
		fmt.Fprintf(w, "policy\t%s\n", t.Policy)
	}
	switch {
	case t.Timeout == task.AutoTimeout:
		fmt.Fprintf(w, "timeout\tauto (learned from its successful runs; each failed attempt's is below)\n")
	case t.Timeout > 0:
		fmt.Fprintf(w, "timeout\t%s\n", retry.FormatDuration(t.Timeout))
	}
	if t.State.Waiting() && !t.NextAt.IsZero() {
		fmt.Fprintf(w, "next\t%s\n", t.NextAt.Local().Format(time.RFC3339Nano))
	}
	if t.Result != nil {
		fmt.Fprintf(w, "result\t%s\n", clip(string(t.Result), 200))
	}
	if t.LastError != "" {
		fmt.Fprintf(w, "error\t%s\n", firstLine(t.LastError))
		fmt.Fprintf(w, "fingerprint\t%s (%d in a row)\n", t.Fingerprint, t.Streak)
	}
	w.Flush()
}

func took(a task.Attempt) string {
	if a.EndedAt.IsZero() {
		return "-"
	}
	return a.EndedAt.Sub(a.StartedAt).Round(time.Millisecond).String()
}

func exitText(a task.Attempt) string {
	switch {
	case a.Signal != "":
		return a.Signal
	case a.ExitCode != nil:
		return strconv.Itoa(*a.ExitCode)
	}
	return "-"
}

func delayText(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}
