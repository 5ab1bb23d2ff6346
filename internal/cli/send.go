package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func newSendCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "send TASK TOPIC JSON|@FILE|@- [--json]",
		Short: "send a message to a task, for its handler to receive (grit.Receive); audited",
		Long: `Keeps JSON as a message on TOPIC for task TASK, until a handler of the
task receives it (grit.Receive, oldest first among its topic's). A task
waiting for a message of TOPIC runs at once. A task that ended refuses
it. The send is written to the store's audit log (docs/waits.md).`,
		Example: `grit send 1042 approval '{"by": "ana"}'`,
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			return e.send(cmd.Context(), id, args[1], args[2], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the message kept, as JSON")
	return cmd
}

func (e *env) send(ctx context.Context, id int64, topic, payload string, asJSON bool) error {
	raw, err := e.readJSON("send: JSON", payload, `grit send 1042 approval '{"by": "ana"}'`)
	if err != nil {
		return err
	}
	if raw == nil {
		return usageErr("send: no JSON to send: give the message (null for none), e.g. grit send %d %s '{\"by\": \"ana\"}'", id, topic)
	}
	st, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	mb, ok := st.(store.Mailbox)
	if !ok {
		return fmt.Errorf("send: the store %s keeps no messages to tasks", shownDSN(e.storeDSN))
	}
	m, err := mb.Send(ctx, id, topic, raw)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return usageErr("send: %s", e.noTask(id))
	case errors.Is(err, task.ErrInvalid), errors.Is(err, task.ErrWrongState):
		return &exitError{code: exitUsage, err: fmt.Errorf("send: %w", err)}
	case err != nil:
		return storeErr(err)
	}
	a := store.SentAudit(m)
	e.audit(ctx, st, a.Action, a.Target, a.Count, a.Detail)
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(m)
	}
	fmt.Fprintf(e.stdout, "task %d: message %d on %s kept; a handler of the task receives it (grit.Receive)\n", id, m.ID, topic)
	return nil
}
