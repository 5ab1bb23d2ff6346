package dash

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/grit-run/grit/internal/quarantine"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The dead letters page shows, beside the dead letters, the items
// handlers set aside (grit.Quarantine), grouped by fingerprint, with a
// few of each group's items; a group opened (?fingerprint=) shows a page
// of them. Replay and drop, of a group or one item, go through
// internal/quarantine, as the CLI's and the API's do.

// The items the page shows: a few of each of the first groups, and a page
// of an opened one.
const (
	quarSample = 3
	quarGroups = 20
	quarPage   = 50
)

// deadLettersData is the dead letters page.
type deadLettersData struct {
	Letters    []store.DeadLetterGroup
	Quarantine []quarGroup
}

// quarGroup is a group of quarantined items as the page shows it: some of
// its items, oldest first, and Next, the id after which the next page
// starts (0: none).
type quarGroup struct {
	store.QuarantineGroup
	Items  []task.Quarantined
	Opened bool
	Next   int64
}

// Replayable says whether a replay of the group may replay anything: an
// item shown names a kind to replay it as, or some are not shown.
func (g quarGroup) Replayable() bool {
	if g.Count > len(g.Items) {
		return true
	}
	for _, it := range g.Items {
		if it.ReplayKind != "" {
			return true
		}
	}
	return false
}

// quarantined reads the groups of quarantined items and their items: a
// few of each of the first groups, and a page of the group opened (a
// fingerprint, from after on).
func (d *Dashboard) quarantined(ctx context.Context, opened string, after int64) ([]quarGroup, error) {
	gs, err := d.read.QuarantineGroups(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]quarGroup, len(gs))
	for i, g := range gs {
		out[i].QuarantineGroup = g
		f := task.QuarantineFilter{Fingerprint: g.Fingerprint, Limit: quarSample}
		switch {
		case g.Fingerprint == opened:
			out[i].Opened, f.AfterID, f.Limit = true, after, quarPage+1
		case i >= quarGroups:
			continue
		}
		if out[i].Items, err = d.read.ListQuarantined(ctx, f); err != nil {
			return nil, err
		}
		if out[i].Opened && len(out[i].Items) > quarPage {
			out[i].Items = out[i].Items[:quarPage]
			out[i].Next = out[i].Items[quarPage-1].ID
		}
	}
	return out, nil
}

// actQuarantined replays or drops quarantined items: a fingerprint's
// group, or one item (id).
func (d *Dashboard) actQuarantined(w http.ResponseWriter, r *http.Request, v who) error {
	action := r.PostFormValue("action")
	if action != "replay" && action != "drop" {
		return errBadRequest{fmt.Sprintf("action %q: want replay or drop", action)}
	}
	ids, fp, target, err := d.quarantineTarget(r)
	if err != nil {
		return err
	}
	var res quarantine.Result
	if action == "replay" {
		res, err = quarantine.Replay(r.Context(), d.cfg.Store, ids, fp)
	} else {
		res, err = quarantine.Drop(r.Context(), d.cfg.Store, ids, fp)
	}
	n, detail := res.Dropped, ""
	if action == "replay" {
		n = len(res.Replayed)
		if len(res.Refused) > 0 {
			detail = fmt.Sprintf("refused %d, the first: %v", len(res.Refused), res.Refused[0])
		}
	}
	d.record(r.Context(), v, action, target, n, detail)
	if err != nil {
		return err
	}
	if action == "replay" && n == 0 && len(res.Refused) > 0 {
		return errBadRequest{fmt.Sprintf("%s: none replayed: %v", target, res.Refused[0])}
	}
	back(w, r, "/dead-letters", quarantineNote(action, target, res))
	return nil
}

// quarantineTarget reads what a form names: a fingerprint, or one item's
// id, which must still be quarantined.
func (d *Dashboard) quarantineTarget(r *http.Request) (ids []int64, fp, target string, err error) {
	fp = r.PostFormValue("fingerprint")
	if s := r.PostFormValue("id"); s != "" {
		id, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil || id <= 0 {
			return nil, "", "", errBadRequest{fmt.Sprintf("id %q: want a quarantined item's id", s)}
		}
		ids = []int64{id}
	}
	if err := quarantine.Check(ids, fp); err != nil {
		return nil, "", "", errBadRequest{strings.TrimPrefix(err.Error(), task.ErrInvalid.Error()+": ")}
	}
	if fp != "" {
		return nil, fp, "quarantined items with fingerprint " + fp, nil
	}
	unknown, err := quarantine.Unknown(r.Context(), d.cfg.Store, ids)
	if err != nil {
		return nil, "", "", err
	}
	if len(unknown) > 0 {
		return nil, "", "", errBadRequest{fmt.Sprintf("quarantined item %d is not there: it was replayed or dropped already; reload the page", ids[0])}
	}
	return ids, "", fmt.Sprintf("quarantined item %d", ids[0]), nil
}

// quarantineNote says what an action did, for the page's flash.
func quarantineNote(action, target string, res quarantine.Result) string {
	if action == "drop" {
		return fmt.Sprintf("%s: %d dropped", target, res.Dropped)
	}
	note := fmt.Sprintf("%s: %d replayed", target, len(res.Replayed))
	if len(res.Replayed) > 0 {
		var ids []string
		for _, e := range res.Replayed[:min(len(res.Replayed), 5)] {
			ids = append(ids, strconv.FormatInt(e.Task.ID, 10))
		}
		note += " as task " + strings.Join(ids, ", ")
		if len(res.Replayed) > 5 {
			note += "…"
		}
	}
	if len(res.Refused) > 0 {
		note += fmt.Sprintf("; %d refused: %v", len(res.Refused), res.Refused[0])
	}
	return note
}
