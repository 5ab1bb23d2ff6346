package dash

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/machine"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// machinesPage is how many instances the machines page shows at once.
const machinesPage = 50

// instanceLink is the page of instance key of machine. Both are escaped
// as one path segment each, so that a key with "/", "?" or "#" still
// names its page.
func instanceLink(machine, key string) string {
	return "/machines/" + url.PathEscape(machine) + "/" + url.PathEscape(key)
}

// instanceRow is an instance as the machines page lists it.
type instanceRow struct {
	Row store.InstanceRow
	In  fsm.Instance
	Err string // the state could not be read (written by a newer grit)
}

func (r instanceRow) Link() string { return instanceLink(r.Row.Machine, r.Row.Key) }

type machinesData struct {
	Has       bool // the store keeps state machines
	Machine   string
	After     string
	Instances []instanceRow
	Next      string // the next page's address; "" on the last
	// NextWithin is set when the next page was asked without a filter:
	// the store pages within one machine, so the next page is that
	// machine's.
	NextWithin string
}

// machines lists instances by machine then key, a page at a time; the
// store's keyset runs within one machine.
func (d *Dashboard) machines(w http.ResponseWriter, r *http.Request, v who) error {
	ms, err := machine.Of(d.read)
	if err != nil {
		d.render(w, r, v, "machines", "Machines", machinesData{})
		return nil
	}
	q := r.URL.Query()
	data := machinesData{Has: true, Machine: strings.TrimSpace(q.Get("machine"))}
	if data.Machine != "" {
		data.After = q.Get("after")
	}
	rows, err := ms.Instances(r.Context(), store.InstanceFilter{Machine: data.Machine, AfterKey: data.After, Limit: machinesPage + 1})
	if err != nil {
		return err
	}
	more := len(rows) > machinesPage
	if more {
		rows = rows[:machinesPage]
	}
	for _, row := range rows {
		ir := instanceRow{Row: row}
		if in, err := machine.Decode(row.State); err != nil {
			ir.Err = err.Error()
		} else {
			ir.In = in
		}
		data.Instances = append(data.Instances, ir)
	}
	if more {
		last := rows[len(rows)-1]
		data.Next = "/machines?" + url.Values{"machine": {last.Machine}, "after": {last.Key}}.Encode()
		if data.Machine == "" {
			data.NextWithin = last.Machine
		}
	}
	d.render(w, r, v, "machines", "Machines", data)
	return nil
}

type instanceData struct {
	Has          bool
	Machine, Key string
	Link         string
	Row          store.InstanceRow
	In           fsm.Instance
	// TaskState is the state now of the task of the state being entered;
	// Gone when it was pruned.
	TaskState task.State
	History   []fsm.Entry // newest first
}

// instance shows one instance: its state, the transition under way, the
// events waiting, its history newest first, and a form to send an event.
func (d *Dashboard) instance(w http.ResponseWriter, r *http.Request, v who) error {
	name, key := r.PathValue("machine"), r.PathValue("key")
	if _, err := machine.Of(d.read); err != nil {
		d.render(w, r, v, "machine", "Machines", instanceData{Machine: name, Key: key})
		return nil
	}
	ctx := r.Context()
	in, row, err := machine.Get(ctx, d.read, name, key)
	if errors.Is(err, machine.ErrNotFound) {
		return errNotFound{fmt.Sprintf("instance %q of machine %q", key, name)}
	}
	if err != nil {
		return err
	}
	data := instanceData{Has: true, Machine: name, Key: key, Link: instanceLink(name, key), Row: row, In: in}
	if e := in.Entering; e != nil && e.Task != 0 {
		t, err := d.read.GetTask(ctx, e.Task)
		switch {
		case errors.Is(err, task.ErrNotFound):
			data.TaskState = machine.Gone
		case err != nil:
			return err
		default:
			data.TaskState = t.State
		}
	}
	for i := len(in.History) - 1; i >= 0; i-- {
		data.History = append(data.History, in.History[i])
	}
	d.render(w, r, v, "machine", name+"/"+key, data)
	return nil
}

// actSend queues an event on an instance. The dashboard does not know
// the machines' definitions, so it only queues the event: a worker that
// has the machine delivers it.
func (d *Dashboard) actSend(w http.ResponseWriter, r *http.Request, v who) error {
	if _, err := machine.Of(d.cfg.Store); err != nil {
		return errBadRequest{"state machines are not available on this store: it keeps none"}
	}
	name, key := r.PathValue("machine"), r.PathValue("key")
	event := strings.TrimSpace(r.PostFormValue("event"))
	if event == "" {
		return errBadRequest{"no event named: the form's event field is empty"}
	}
	var payload json.RawMessage
	if p := strings.TrimSpace(r.PostFormValue("payload")); p != "" {
		var x any
		if err := json.Unmarshal([]byte(p), &x); err != nil {
			return errBadRequest{fmt.Sprintf("the payload is not JSON (%v): leave it empty, or write a JSON value such as {\"amount\": 42}", err)}
		}
		payload = json.RawMessage(p)
	}
	ctx := r.Context()
	if _, _, err := machine.Get(ctx, d.cfg.Store, name, key); errors.Is(err, machine.ErrNotFound) {
		return errNotFound{fmt.Sprintf("instance %q of machine %q", key, name)}
	} else if err != nil {
		return err
	}
	now, err := d.cfg.Store.Now(ctx)
	if err != nil {
		return err
	}
	in, err := machine.Send(ctx, d.cfg.Store, nil, name, key, event, payload, now)
	if errors.Is(err, task.ErrInvalid) {
		return errBadRequest{err.Error()}
	}
	if err != nil {
		return err
	}
	detail := fmt.Sprintf("event %s (seq %d)", event, in.Sent)
	if payload != nil {
		detail += " with payload " + shorten(string(payload), 200)
	}
	d.record(ctx, v, "send", "instance "+name+"/"+key, 0, detail)
	note := fmt.Sprintf("event %s sent to %s/%s (seq %d): a worker that has machine %s delivers it within a second", event, name, key, in.Sent, name)
	http.Redirect(w, r, instanceLink(name, key)+"?done="+url.QueryEscape(note), http.StatusSeeOther)
	return nil
}
