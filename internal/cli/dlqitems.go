package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/internal/quarantine"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// quarantineGroup is the quarantined items that share a fingerprint, as
// grit dlq list shows them beside the dead letters.
type quarantineGroup struct {
	Fingerprint string             `json:"fingerprint"`
	Count       int                `json:"count"`
	Error       string             `json:"error"` // the newest item's
	Quarantined bool               `json:"quarantined"`
	Kinds       []string           `json:"kinds"`
	Items       []task.Quarantined `json:"items"` // the oldest, at most quarantineShown
}

// quarantineShown bounds the items grit dlq list shows of a group.
const quarantineShown = 20

func quarantineGroups(ctx context.Context, st store.Quarantiner) ([]quarantineGroup, error) {
	gs, err := st.QuarantineGroups(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]quarantineGroup, 0, len(gs))
	for _, g := range gs {
		items, err := st.ListQuarantined(ctx, task.QuarantineFilter{Fingerprint: g.Fingerprint, Limit: quarantineShown})
		if err != nil {
			return nil, err
		}
		out = append(out, quarantineGroup{Fingerprint: g.Fingerprint, Count: g.Count, Error: g.Sample, Quarantined: true, Kinds: g.Kinds, Items: items})
	}
	return out, nil
}

func printQuarantineGroups(w io.Writer, gs []quarantineGroup) error {
	if len(gs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nQUARANTINED ITEMS (replay or drop them: grit dlq items replay|drop ID... or --fingerprint F)")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FINGERPRINT\tCOUNT\tITEMS\tKINDS\tERROR")
	for _, g := range gs {
		var ids []string
		for i, it := range g.Items {
			if i == 5 {
				ids = append(ids, fmt.Sprintf("+%d", g.Count-5))
				break
			}
			ids = append(ids, fmt.Sprint(it.ID))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", g.Fingerprint, g.Count, strings.Join(ids, ","), strings.Join(g.Kinds, ","), firstLine(g.Error))
	}
	return tw.Flush()
}

// newDLQItemsCmd is grit dlq items: the quarantined items' actions.
func newDLQItemsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "items",
		Short: "replay or drop quarantined items (rows a handler set aside with grit.Quarantine)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	for _, verb := range []string{"replay", "drop"} {
		var fp string
		var asJSON bool
		short := "run each item again, as a task of the kind its handler names (HandlerConfig.Quarantine.Kind), with the item as its args"
		if verb == "drop" {
			short = "delete the items: they are not run"
		}
		c := &cobra.Command{
			Use:   verb + " [ID...]",
			Short: short,
			RunE: func(cmd *cobra.Command, args []string) error {
				return e.dlqItems(cmd.Context(), verb, args, fp, asJSON)
			},
		}
		c.Flags().StringVar(&fp, "fingerprint", "", "every item of this fingerprint, as grit dlq list shows it")
		c.Flags().BoolVar(&asJSON, "json", false, "print what was done as JSON")
		cmd.AddCommand(c)
	}
	return cmd
}

// dlqItemsResult is what grit dlq items replay|drop --json prints.
type dlqItemsResult struct {
	Replayed []int64  `json:"replayed_tasks"` // the tasks the items became
	Dropped  int      `json:"dropped"`
	Refused  []string `json:"refused"`
}

func (e *env) dlqItems(ctx context.Context, verb string, args []string, fp string, asJSON bool) error {
	ids := make([]int64, 0, len(args))
	for _, s := range args {
		id, err := parseID(s)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if (len(ids) == 0) == (fp == "") {
		return usageErr("dlq items %s: name the items by id, or give --fingerprint (one of the two): grit dlq list shows both", verb)
	}
	st, err := e.openExisting(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var r quarantine.Result
	if verb == "replay" {
		r, err = quarantine.Replay(ctx, st, ids, fp)
	} else {
		r, err = quarantine.Drop(ctx, st, ids, fp)
	}
	target := "fingerprint " + fp
	if fp == "" {
		target = "items " + strings.Trim(fmt.Sprint(ids), "[]")
	}
	if r.Dropped > 0 {
		e.audit(ctx, st, "quarantine "+verb, target, r.Dropped, "")
	}
	out := dlqItemsResult{Replayed: []int64{}, Dropped: r.Dropped, Refused: []string{}}
	for _, en := range r.Replayed {
		out.Replayed = append(out.Replayed, en.Task.ID)
	}
	for _, rf := range r.Refused {
		out.Refused = append(out.Refused, rf.Error())
	}
	if asJSON {
		if jerr := json.NewEncoder(e.stdout).Encode(out); jerr != nil {
			return jerr
		}
	} else if verb == "replay" {
		fmt.Fprintf(e.stdout, "replayed %d items as tasks %s\n", len(out.Replayed), strings.Trim(fmt.Sprint(out.Replayed), "[]"))
	} else {
		fmt.Fprintf(e.stdout, "dropped %d items\n", r.Dropped)
	}
	switch {
	case err != nil:
		return &exitError{code: exitFailed, err: fmt.Errorf("dlq items %s: %w", verb, err)}
	case len(r.Refused) > 0:
		return &exitError{code: exitUsage, err: fmt.Errorf("dlq items %s: %w", verb, r.Err())}
	case r.Dropped == 0 && !asJSON:
		return &exitError{code: exitUsage, err: errors.New("dlq items " + verb + ": no quarantined item matched: grit dlq list shows them")}
	}
	return nil
}
