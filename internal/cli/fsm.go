package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/machine"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func newFSMCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fsm",
		Short: "send events to state machines' instances, and show them",
		Long: `State machines (docs/fsm.md) are declared in Go (grit.Config.Machines);
their instances live in the store. grit fsm send queues an event on an
instance, which a worker that has the machine delivers; show and list read
instances. send is written to the store's audit log.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newFSMSendCmd(e), newFSMShowCmd(e), newFSMListCmd(e))
	return cmd
}

func newFSMSendCmd(e *env) *cobra.Command {
	var payload string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "send MACHINE KEY EVENT [--payload JSON|@FILE|@-]",
		Short: "queue an event on an instance of a state machine (made in its initial state when it is not there)",
		Long: `Queues EVENT on instance KEY of MACHINE, after the events sent before it,
and prints what is waiting. grit does not know the machine here: a worker
that has it (grit.Config.Machines) delivers the event within a second.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.fsmSend(cmd.Context(), args[0], args[1], args[2], payload, asJSON)
		},
	}
	cmd.Flags().StringVar(&payload, "payload", "", "the event's payload: JSON, @FILE to read it from a file, @- from standard input")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the instance after, as grit fsm show --json prints it (its sent is the event's number)")
	return cmd
}

func newFSMShowCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show MACHINE KEY [--json]",
		Short: "show an instance: its state, the transition under way, the events waiting, and its history newest first",
		Long: `Shows instance KEY of MACHINE. --json prints it as the store keeps it
(history oldest first), with its machine, key, version and last write.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.fsmShow(cmd.Context(), args[0], args[1], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newFSMListCmd(e *env) *cobra.Command {
	var (
		asJSON bool
		after  string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "list [MACHINE] [--after KEY] [--limit N] [--json]",
		Short: "list instances by machine and key, with their states and the events waiting",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var m string
			if len(args) == 1 {
				m = args[0]
			}
			return e.fsmList(cmd.Context(), m, after, limit, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&after, "after", "", "list the keys after KEY (with MACHINE): the next page")
	cmd.Flags().IntVar(&limit, "limit", 100, "at most N instances (1 to 1000)")
	return cmd
}

// maxFSMList bounds a page of grit fsm list.
const maxFSMList = 1000

var fsmExample = map[string]string{"send": "grit fsm send order order-1042 paid", "show": "grit fsm show order order-1042"}

// checkInstance checks a machine's name and an instance's key as the
// store and package fsm take them.
func checkInstance(cmd, m, key string) error {
	if p := fsm.NameProblem(m); p != "" {
		return usageErr("fsm %s: machine %q: %s (e.g. %s)", cmd, m, p, fsmExample[cmd])
	}
	if key == "" || len(key) > 500 {
		return usageErr("fsm %s: key %q: want 1 to 500 bytes (e.g. order-1042)", cmd, key)
	}
	return nil
}

func (e *env) fsmSend(ctx context.Context, m, key, event, payload string, asJSON bool) error {
	if err := checkInstance("send", m, key); err != nil {
		return err
	}
	if p := fsm.NameProblem(event); p != "" {
		return usageErr("fsm send: event %q: %s (e.g. grit fsm send %s %s paid)", event, p, m, key)
	}
	raw, err := e.readJSON("fsm send: --payload", payload, `--payload '{"cents": 1200}'`)
	if err != nil {
		return err
	}
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	now, err := st.Now(ctx)
	if err != nil {
		return storeErr(err)
	}
	in, err := machine.Send(ctx, st, nil, m, key, event, raw, now)
	if err != nil {
		return fsmErr("send", err)
	}
	e.audit(ctx, st, "send", "instance "+m+"/"+key, 1, fmt.Sprintf("event %d: %s", in.Sent, event))
	if asJSON {
		return e.printInstanceJSON(ctx, st, "send", m, key)
	}
	fmt.Fprintf(e.stdout, "instance %s/%s: event %d (%s) queued; a worker that has machine %s delivers it\n", m, key, in.Sent, event, m)
	return e.printInstance(in)
}

// readJSON reads JSON given on the command line (what names it in an
// error, example shows it written well): as given, @FILE, or @- for
// standard input; "" is none.
func (e *env) readJSON(what, v, example string) (json.RawMessage, error) {
	raw := []byte(v)
	var err error
	switch {
	case v == "@-":
		raw, err = io.ReadAll(e.in())
	case strings.HasPrefix(v, "@"):
		raw, err = os.ReadFile(v[1:])
	}
	if err != nil {
		return nil, usageErr("%s %s: %v", what, v, err)
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, nil
	}
	if p := task.JSONProblem(raw); p != "" {
		return nil, usageErr("%s %s: %s (e.g. %s)", what, shorten(v), p, example)
	}
	return raw, nil
}

// fsmErr gives an instance's error its exit code: 2 for what the
// operator can fix (a bad request, an instance that is not there).
func fsmErr(cmd string, err error) error {
	switch {
	case errors.Is(err, machine.ErrNoMachines):
		return fmt.Errorf("fsm %s: %w", cmd, err)
	case errors.Is(err, task.ErrNotFound), errors.Is(err, task.ErrInvalid):
		return &exitError{code: exitUsage, err: fmt.Errorf("fsm %s: %w (grit fsm list shows the instances)", cmd, err)}
	}
	return fmt.Errorf("fsm %s: %w", cmd, err)
}

// instanceJSON is an instance as grit fsm show and list --json print it.
type instanceJSON struct {
	Machine string    `json:"machine"`
	Key     string    `json:"key"`
	Version int64     `json:"version"`
	Updated time.Time `json:"updated"`
	fsm.Instance
	Error string `json:"error,omitempty"`
}

func toInstanceJSON(r store.InstanceRow) instanceJSON {
	in, err := machine.Decode(r.State)
	out := instanceJSON{Machine: r.Machine, Key: r.Key, Version: r.Version, Updated: r.Updated, Instance: in}
	if err != nil {
		out.Error = err.Error()
	}
	return out
}

func (e *env) fsmShow(ctx context.Context, m, key string, asJSON bool) error {
	if err := checkInstance("show", m, key); err != nil {
		return err
	}
	st, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if asJSON {
		return e.printInstanceJSON(ctx, st, "show", m, key)
	}
	in, r, err := machine.Get(ctx, st, m, key)
	if err != nil {
		return fsmErr("show", err)
	}
	fmt.Fprintf(e.stdout, "instance %s/%s (version %d, written %s)\n", m, key, r.Version, r.Updated.Local().Format(time.DateTime))
	if err := e.printInstance(in); err != nil {
		return err
	}
	if len(in.History) == 0 {
		return nil
	}
	fmt.Fprintln(e.stdout, "history, newest first:")
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  SEQ\tEVENT\tFROM\tTO\tOUTCOME\tTASK\tAT\tWHY")
	for i := len(in.History) - 1; i >= 0; i-- {
		h := in.History[i]
		fmt.Fprintf(w, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Seq, h.Event, h.From, orDash(h.To), h.Outcome, taskRef(h.Task),
			h.At.Local().Format(time.DateTime), orDash(h.Why))
	}
	return w.Flush()
}

// printInstanceJSON prints an instance as the store keeps it (history
// oldest first), with its machine, key, version and last write.
func (e *env) printInstanceJSON(ctx context.Context, st store.Store, cmd, m, key string) error {
	in, r, err := machine.Get(ctx, st, m, key)
	if err != nil {
		return fsmErr(cmd, err)
	}
	return json.NewEncoder(e.stdout).Encode(instanceJSON{Machine: m, Key: key, Version: r.Version, Updated: r.Updated, Instance: in})
}

// printInstance prints an instance's state, its transition under way and
// the events waiting.
func (e *env) printInstance(in fsm.Instance) error {
	state := in.State
	if state == "" {
		state = "- (new: a worker that has the machine starts it in its initial state)"
	}
	fmt.Fprintf(e.stdout, "state:    %s\n", state)
	if s := entering(in); s != "" {
		fmt.Fprintf(e.stdout, "entering: %s\n", s)
	}
	if len(in.Queue) == 0 {
		fmt.Fprintln(e.stdout, "waiting:  none")
		return nil
	}
	fmt.Fprintf(e.stdout, "waiting:  %d events, delivered in this order\n", len(in.Queue))
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  SEQ\tEVENT\tSENT\tPAYLOAD")
	for _, ev := range in.Queue {
		fmt.Fprintf(w, "  %d\t%s\t%s\t%s\n", ev.Seq, ev.Event, ev.At.Local().Format(time.DateTime), payloadShort(ev.Payload))
	}
	return w.Flush()
}

// entering is the transition under way in a few words, "" when none.
func entering(in fsm.Instance) string {
	x := in.Entering
	if x == nil {
		return ""
	}
	s := fmt.Sprintf("%s --%s--> %s (event %d, %s)", x.From, x.Event.Event, x.To, x.Seq, taskRef(x.Task))
	if in.Held {
		s += "; held: its task is a dead letter (grit dlq replay, skip or fail it)"
	}
	return s
}

// payloadShort is a payload on one line of at most 60 bytes (cut at a
// character), "-" for none.
func payloadShort(p json.RawMessage) string {
	s := strings.Join(strings.Fields(string(p)), " ")
	if len(s) <= 60 {
		return orDash(s)
	}
	i := 60
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func taskRef(id int64) string {
	if id == 0 {
		return "-"
	}
	return fmt.Sprintf("task %d", id)
}

func (e *env) fsmList(ctx context.Context, m, after string, limit int, asJSON bool) error {
	switch {
	case m != "" && fsm.NameProblem(m) != "":
		return usageErr("fsm list: machine %q: %s (e.g. grit fsm list order)", m, fsm.NameProblem(m))
	case after != "" && m == "":
		return usageErr("fsm list: --after %q: give the MACHINE too (e.g. grit fsm list order --after %s)", after, after)
	case limit < 1 || limit > maxFSMList:
		return usageErr("fsm list: --limit %d: want 1 to %d", limit, maxFSMList)
	}
	st, err := e.openRead(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	ms, err := machine.Of(st)
	if err != nil {
		return fsmErr("list", err)
	}
	rows, err := ms.Instances(ctx, store.InstanceFilter{Machine: m, AfterKey: after, Limit: limit})
	if err != nil {
		return fsmErr("list", err)
	}
	if asJSON {
		out := make([]instanceJSON, 0, len(rows))
		for _, r := range rows {
			out = append(out, toInstanceJSON(r))
		}
		return json.NewEncoder(e.stdout).Encode(out)
	}
	if len(rows) == 0 {
		fmt.Fprintln(e.stdout, "no instances (grit fsm send makes one; see docs/fsm.md)")
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MACHINE\tKEY\tSTATE\tENTERING\tWAITING")
	for _, r := range rows {
		j := toInstanceJSON(r)
		if j.Error != "" {
			fmt.Fprintf(w, "%s\t%s\tunreadable: %s\t-\t-\n", r.Machine, r.Key, j.Error)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Machine, r.Key, orDash(j.State), orDash(enteringShort(j.Instance)), waiting(j.Queue))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(rows) == limit && m != "" {
		fmt.Fprintf(e.stdout, "more: grit fsm list %s --after %s\n", m, rows[len(rows)-1].Key)
	} else if len(rows) == limit {
		fmt.Fprintf(e.stdout, "more may follow: grit fsm list MACHINE --after KEY pages through one machine\n")
	}
	return nil
}

func enteringShort(in fsm.Instance) string {
	x := in.Entering
	if x == nil {
		return ""
	}
	s := fmt.Sprintf("%s (%s)", x.To, taskRef(x.Task))
	if in.Held {
		s = "HELD " + s
	}
	return s
}

// waiting is the events waiting in a few words: "3: paid shipped …".
func waiting(q []fsm.Event) string {
	if len(q) == 0 {
		return "0"
	}
	names := make([]string, 0, 3)
	for _, ev := range q[:min(len(q), 3)] {
		names = append(names, ev.Event)
	}
	s := fmt.Sprintf("%d: %s", len(q), strings.Join(names, " "))
	if len(q) > 3 {
		s += " …"
	}
	return s
}
