package dash

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// maxRamp bounds a ramped replay's rate field: above it, a ramp is no
// ramp.
const maxRamp = 10000

// parseAction reads the form's action, one of allowed.
func parseAction(r *http.Request, allowed ...task.Action) (task.Action, error) {
	a := task.Action(r.PostFormValue("action"))
	for _, ok := range allowed {
		if a == ok {
			return a, nil
		}
	}
	var names []string
	for _, ok := range allowed {
		names = append(names, string(ok))
	}
	return "", errBadRequest{fmt.Sprintf("action %q: want one of %s", a, strings.Join(names, ", "))}
}

// audit records what v did; a store that keeps no audit log only gets a
// line in the logs.
func (d *Dashboard) record(ctx context.Context, v who, action, target string, n int, detail string) {
	a, ok := d.cfg.Store.(store.Auditor)
	if !ok {
		d.cfg.Logger.Warn("the store keeps no audit log; an operator action is only logged", "who", v.Name, "action", action, "target", target, "count", n)
		return
	}
	if _, err := a.Audit(context.WithoutCancel(ctx), store.AuditEntry{Who: v.Name, Action: action, Target: target, Count: n, Detail: detail}); err != nil {
		d.cfg.Logger.Error("could not write the audit log", "who", v.Name, "action", action, "target", target, "count", n, "err", err)
	}
}

// back sends the browser back to where the form was, with a note of what
// was done.
func back(w http.ResponseWriter, r *http.Request, fallback, note string) {
	to := r.PostFormValue("back")
	if to == "" || !strings.HasPrefix(to, "/") || strings.HasPrefix(to, "//") {
		to = fallback
	}
	http.Redirect(w, r, withQuery(to, "done", note), http.StatusSeeOther)
}

func (d *Dashboard) actTask(w http.ResponseWriter, r *http.Request, v who) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errBadRequest{fmt.Sprintf("task %q: want a task id", r.PathValue("id"))}
	}
	a, err := parseAction(r, task.ActCancel, task.ActReplay, task.ActSkip, task.ActFail, task.ActRetry)
	if err != nil {
		return err
	}
	t, err := d.cfg.Store.Act(r.Context(), id, a)
	var wrong *task.StateError
	switch {
	case errors.Is(err, task.ErrNotFound):
		return errNotFound{fmt.Sprintf("task %d", id)}
	case errors.As(err, &wrong):
		return errBadRequest{fmt.Sprintf("task %d cannot be %s: %v", id, pastOf(a), err)}
	case err != nil:
		return err
	}
	d.record(r.Context(), v, string(a), fmt.Sprintf("task %d", id), 1, "")
	back(w, r, fmt.Sprintf("/tasks/%d", id), fmt.Sprintf("task %d %s: now %s", id, pastOf(a), t.State))
	return nil
}

// actRedrive redrives a run that ended without succeeding
// (ops.Redrive): what did not succeed runs again.
func (d *Dashboard) actRedrive(w http.ResponseWriter, r *http.Request, v who) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errBadRequest{fmt.Sprintf("run %q: want a run id", r.PathValue("id"))}
	}
	rd, entry, err := ops.Redrive(r.Context(), d.cfg.Store, id)
	switch {
	case errors.Is(err, task.ErrNotFound):
		return errNotFound{fmt.Sprintf("run %d", id)}
	case errors.Is(err, task.ErrWrongState):
		return errBadRequest{err.Error()} // it says why, and what to do
	case err != nil:
		return err
	}
	d.record(r.Context(), v, entry.Action, entry.Target, entry.Count, entry.Detail)
	back(w, r, fmt.Sprintf("/runs/%d", id), fmt.Sprintf("run %d redriven: now %s; sent back to wait: %s", id, rd.Run.State, ops.IDList(rd.Tasks)))
	return nil
}

// actDelete deletes tasks for good (ops.DeleteAll). It is the
// dashboard's, not a store's task.Action: a deleted task has no state.
const actDelete task.Action = "delete"

// actTasks applies an action to the tasks an operator selected: those
// ticked on the page (id, one value a task), or every task the posted
// filter selects, however many pages they take (confirm=all).
func (d *Dashboard) actTasks(w http.ResponseWriter, r *http.Request, v who) error {
	a, err := parseAction(r, task.ActCancel, task.ActReplay, task.ActRetry, actDelete)
	if err != nil {
		return err
	}
	sel, err := parseSelection(r)
	if err != nil {
		return err
	}
	if a == task.ActReplay && sel.ids == nil && !(len(sel.filter.States) == 1 && sel.filter.States[0] == task.DeadLetter) {
		return errBadRequest{"replay applies to dead letters: filter on state DEAD_LETTER alone"}
	}
	if a == task.ActRetry && sel.filter.Run != 0 {
		return errBadRequest{fmt.Sprintf("a run's tasks are run again with their run: redrive run %d on its page, /runs/%d (or grit redrive %d)", sel.filter.Run, sel.filter.Run, sel.filter.Run)}
	}
	if a == actDelete {
		return d.deleteTasks(w, r, v, sel)
	}
	b, err := ops.ActAll(r.Context(), d.cfg.Store, sel.store(), a, 0, nil)
	d.record(r.Context(), v, string(a), sel.target, b.Changed, fmt.Sprintf("matched %d, skipped %d", b.Matched, b.Skipped))
	if err != nil {
		return err
	}
	back(w, r, sel.back, fmt.Sprintf("%s: %s %s (%s had moved on or do not apply)", sel.target, count(b.Changed, "task"), pastOf(a), thousands(b.Skipped)))
	return nil
}

// deleteTasks deletes the selected tasks that have ended and are in no
// run (ops.DeleteAll); a selection of a run's tasks alone is refused,
// saying why.
func (d *Dashboard) deleteTasks(w http.ResponseWriter, r *http.Request, v who, sel selection) error {
	if sel.filter.Run != 0 {
		return errBadRequest{fmt.Sprintf("a run's tasks are not deleted one by one: its graph and its end read them. They go with run %d when retention prunes it, once it has ended", sel.filter.Run)}
	}
	del, err := ops.DeleteAll(r.Context(), d.cfg.Store, sel.store())
	if errors.Is(err, ops.ErrCannotDelete) {
		return errBadRequest{"this store cannot delete tasks (it is not a store.Console)"}
	}
	if err == nil && del.Changed == 0 && del.InRun > 0 && del.NotEnded == 0 {
		return errBadRequest{fmt.Sprintf("nothing deleted: %s belong to runs. A run's tasks are not deleted one by one (its graph and its end read them); they go with their run when retention prunes it, once it has ended", count(del.InRun, "task"))}
	}
	why := del.Why()
	d.record(r.Context(), v, string(actDelete), sel.target, del.Changed, fmt.Sprintf("matched %d; %s", del.Matched, cmp.Or(why, "none left alone")))
	if err != nil {
		return err
	}
	note := fmt.Sprintf("%s: %s deleted for good", sel.target, count(del.Changed, "task"))
	if why != "" {
		note += "; " + why
	}
	back(w, r, sel.back, note)
	return nil
}

// selection is what an action on many tasks applies to: the ids ticked
// on a page, or every task a filter selects.
type selection struct {
	ids    []int64
	filter taskFilter // without ids: the tasks page's filter
	target string     // for the audit log and the note
	back   string     // where the browser goes after
}

// store is the selection as a task.Filter.
func (s selection) store() task.Filter {
	if s.ids != nil {
		return task.Filter{IDs: s.ids}
	}
	return s.filter.store()
}

// maxSelected bounds the ids a form may tick: more is a filter's job.
const maxSelected = 1000

// parseSelection reads the ticked ids, or else the filter that the
// operator confirmed applies to every task it selects.
func parseSelection(r *http.Request) (selection, error) {
	q, err := url.ParseQuery(r.PostFormValue("filter"))
	if err != nil {
		return selection{}, errBadRequest{"the filter is not a query string: " + err.Error()}
	}
	f, err := parseTaskFilter(q)
	if err != nil {
		return selection{}, err
	}
	sel := selection{filter: f, back: "/tasks?" + f.query().Encode()}
	if ids := r.PostForm["id"]; len(ids) > 0 {
		if len(ids) > maxSelected {
			return sel, errBadRequest{fmt.Sprintf("%d tasks ticked, more than %d: act on every task the filter selects instead", len(ids), maxSelected)}
		}
		for _, s := range ids {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil || id <= 0 {
				return sel, errBadRequest{fmt.Sprintf("id %q is not a task id: want a whole number above 0", s)}
			}
			sel.ids = append(sel.ids, id)
		}
		sel.filter = taskFilter{} // the ids alone say what is selected
		sel.target = ops.IDList(sel.ids)
		return sel, nil
	}
	if r.PostFormValue("confirm") != "all" {
		return sel, errBadRequest{"nothing selected: tick the tasks to act on, or tick the box that says the action applies to every matching task, then send it again"}
	}
	sel.target = f.Describe()
	return sel, nil
}

// actDeadLetters replays, skips, fails or deletes the dead letters of
// the fingerprints posted (a group's own form posts one; the page's
// selection, those ticked); a replay may be ramped (at most rate tasks a
// second, for each group), so that a fixed bug's backlog does not come
// back as a herd.
func (d *Dashboard) actDeadLetters(w http.ResponseWriter, r *http.Request, v who) error {
	a, err := parseAction(r, task.ActReplay, task.ActSkip, task.ActFail, actDelete)
	if err != nil {
		return err
	}
	fps, ok := r.PostForm["fingerprint"]
	if !ok || len(fps) == 0 {
		return errBadRequest{"no dead-letter group selected: tick the groups to act on first"}
	}
	var rate float64
	if s := strings.TrimSpace(r.PostFormValue("rate")); s != "" && a == task.ActReplay {
		rate, err = strconv.ParseFloat(s, 64)
		if err != nil || rate <= 0 || rate > maxRamp {
			return errBadRequest{fmt.Sprintf("rate %q: want tasks a second, above 0 and at most %d, or nothing for all at once", s, maxRamp)}
		}
	}
	var notes []string
	for _, fp := range fps {
		note, err := d.actDeadLetterGroup(r.Context(), v, a, fp, rate)
		if err != nil {
			return err
		}
		notes = append(notes, note)
	}
	back(w, r, "/dead-letters", strings.Join(notes, "; "))
	return nil
}

// actDeadLetterGroup acts on the dead letters of one fingerprint, and
// says what it did.
func (d *Dashboard) actDeadLetterGroup(ctx context.Context, v who, a task.Action, fp string, rate float64) (string, error) {
	f := task.Filter{States: []task.State{task.DeadLetter}, Fingerprint: fp}
	target := "dead letters with fingerprint " + fp
	if fp == "" {
		target = "dead letters without a fingerprint"
	}
	switch {
	case a == actDelete:
		del, err := ops.DeleteAll(ctx, d.cfg.Store, f)
		if errors.Is(err, ops.ErrCannotDelete) {
			return "", errBadRequest{"this store cannot delete tasks (it is not a store.Console)"}
		}
		why := del.Why()
		d.record(ctx, v, string(a), target, del.Changed, fmt.Sprintf("matched %d; %s", del.Matched, cmp.Or(why, "none left alone")))
		if why != "" {
			why = " (" + why + ")"
		}
		return fmt.Sprintf("%s: %s deleted for good%s", target, thousands(del.Changed), why), err
	case rate > 0:
		// A ramp outlives the request: it goes on in the background, until
		// it has replayed them all or the dashboard closes, and the audit
		// log says so at its start and its end.
		d.ramps.wg.Go(func() {
			b, err := ops.ActAll(d.ramps.ctx, d.cfg.Store, f, a, rate, nil)
			end := "ramp ended"
			if d.ramps.ctx.Err() != nil {
				end = "ramp stopped: the dashboard closed; the rest are dead letters still"
			} else if err != nil {
				d.cfg.Logger.Error("a ramped replay stopped", "fingerprint", fp, "err", err)
				end = "ramp stopped: " + err.Error()
			}
			d.record(context.Background(), v, string(a)+" ("+end+")", target, b.Changed, fmt.Sprintf("matched %d, skipped %d", b.Matched, b.Skipped))
		})
		d.record(ctx, v, string(a)+" (ramp started)", target, 0, fmt.Sprintf("ramped: %g a second", rate))
		return fmt.Sprintf("replaying %s at %g a second", target, rate), nil
	}
	b, err := ops.ActAll(ctx, d.cfg.Store, f, a, 0, nil)
	d.record(ctx, v, string(a), target, b.Changed, fmt.Sprintf("matched %d, skipped %d", b.Matched, b.Skipped))
	return fmt.Sprintf("%s: %s %s", target, thousands(b.Changed), pastOf(a)), err
}

func (d *Dashboard) actBreaker(w http.ResponseWriter, r *http.Request, v who) error {
	gb, ok := d.cfg.Store.(store.GroupBreakers)
	if !ok {
		return errBadRequest{"the store keeps no breakers"}
	}
	group := r.PostFormValue("group")
	a := ops.BreakerAction(r.PostFormValue("action"))
	var openFor time.Duration
	if s := strings.TrimSpace(r.PostFormValue("for")); s != "" && a == ops.BreakerOpen {
		var err error
		if openFor, err = time.ParseDuration(s); err != nil || openFor <= 0 {
			return errBadRequest{fmt.Sprintf("for %q: want a duration such as 10m, or nothing to stay open until closed", s)}
		}
	}
	now, err := d.cfg.Store.Now(r.Context())
	if err != nil {
		return err
	}
	g, err := ops.Breaker(r.Context(), gb, group, a, openFor, now)
	if err != nil {
		if errors.Is(err, task.ErrInvalid) || errors.Is(err, ops.ErrBadAction) {
			return errBadRequest{err.Error()}
		}
		return err
	}
	detail := ""
	if openFor > 0 {
		detail = "for " + openFor.String()
	}
	d.record(r.Context(), v, "breaker "+string(a), "group "+group, 0, detail)
	back(w, r, "/groups", fmt.Sprintf("group %s: breaker %s", group, stateOr(string(g.Circuit.State))))
	return nil
}

// actPause pauses or resumes a queue, kind or tenant.
func (d *Dashboard) actPause(w http.ResponseWriter, r *http.Request, v who) error {
	p, ok := d.cfg.Store.(store.Pauser)
	if !ok {
		return errBadRequest{"the store keeps no pauses"}
	}
	scope, name := store.Scope(r.PostFormValue("scope")), r.PostFormValue("name")
	if err := store.ValidatePause(scope, name); err != nil {
		return errBadRequest{err.Error()}
	}
	note := fmt.Sprintf("%s %s: ", scope, name)
	switch a := r.PostFormValue("action"); a {
	case "pause":
		if _, err := p.Pause(r.Context(), store.Pause{Scope: scope, Name: name, Who: v.Name}); err != nil {
			return err
		}
		note += "paused: no attempt of its tasks starts now; those running go on"
	case "resume":
		was, err := p.Resume(r.Context(), scope, name)
		if err != nil {
			return err
		}
		if !was {
			back(w, r, "/", note+"was not paused")
			return nil
		}
		note += "resumed"
	default:
		return errBadRequest{fmt.Sprintf("action %q: want pause or resume", a)}
	}
	d.record(r.Context(), v, r.PostFormValue("action"), string(scope)+" "+name, 0, "")
	back(w, r, "/", note)
	return nil
}

func stateOr(s string) string {
	if s == "" {
		return "closed"
	}
	return s
}

// pastOf is what an action did, for a sentence.
func pastOf(a task.Action) string {
	switch a {
	case task.ActReplay:
		return "replayed"
	case task.ActSkip:
		return "skipped"
	case task.ActFail:
		return "failed"
	case task.ActCancel:
		return "cancelled"
	case task.ActRetry:
		return "retried"
	case actDelete:
		return "deleted"
	}
	return string(a)
}
