package dash

import (
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

// actTasks applies an action to every task the posted filter selects:
// all of them, however many pages they take.
func (d *Dashboard) actTasks(w http.ResponseWriter, r *http.Request, v who) error {
	a, err := parseAction(r, task.ActCancel, task.ActReplay, task.ActRetry)
	if err != nil {
		return err
	}
	if r.PostFormValue("confirm") != "all" {
		return errBadRequest{"the action applies to every task the filter selects: tick the box that says so, then send it again"}
	}
	q, err := url.ParseQuery(r.PostFormValue("filter"))
	if err != nil {
		return errBadRequest{"the filter is not a query string: " + err.Error()}
	}
	f, err := parseTaskFilter(q)
	if err != nil {
		return err
	}
	if a == task.ActReplay && !(len(f.States) == 1 && f.States[0] == task.DeadLetter) {
		return errBadRequest{"replay applies to dead letters: filter on state DEAD_LETTER alone"}
	}
	if a == task.ActRetry && f.Run != 0 {
		return errBadRequest{fmt.Sprintf("a run's tasks are run again with their run: redrive run %d on its page, /runs/%d (or grit redrive %d)", f.Run, f.Run, f.Run)}
	}
	b, err := ops.ActAll(r.Context(), d.cfg.Store, f.store(), a, 0, nil)
	d.record(r.Context(), v, string(a), f.Describe(), b.Changed, fmt.Sprintf("matched %d, skipped %d", b.Matched, b.Skipped))
	if err != nil {
		return err
	}
	back(w, r, "/tasks?"+f.query().Encode(), fmt.Sprintf("%s: %d tasks %s (%d had moved on)", f.Describe(), b.Changed, pastOf(a), b.Skipped))
	return nil
}

// actDeadLetters replays, skips or fails a fingerprint's dead letters;
// a replay may be ramped (at most rate tasks a second), so that a fixed
// bug's backlog does not come back as a herd.
func (d *Dashboard) actDeadLetters(w http.ResponseWriter, r *http.Request, v who) error {
	a, err := parseAction(r, task.ActReplay, task.ActSkip, task.ActFail)
	if err != nil {
		return err
	}
	fp := r.PostFormValue("fingerprint")
	var rate float64
	if s := strings.TrimSpace(r.PostFormValue("rate")); s != "" && a == task.ActReplay {
		rate, err = strconv.ParseFloat(s, 64)
		if err != nil || rate <= 0 || rate > maxRamp {
			return errBadRequest{fmt.Sprintf("rate %q: want tasks a second, above 0 and at most %d, or nothing for all at once", s, maxRamp)}
		}
	}
	f := task.Filter{States: []task.State{task.DeadLetter}, Fingerprint: fp}
	target := "dead letters with fingerprint " + fp
	if fp == "" {
		target = "dead letters without a fingerprint"
	}
	detail := ""
	if rate > 0 {
		detail = fmt.Sprintf("ramped: %g a second", rate)
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
		d.record(r.Context(), v, string(a)+" (ramp started)", target, 0, detail)
		back(w, r, "/dead-letters", fmt.Sprintf("replaying %s at %g a second", target, rate))
		return nil
	}
	b, err := ops.ActAll(r.Context(), d.cfg.Store, f, a, 0, nil)
	d.record(r.Context(), v, string(a), target, b.Changed, fmt.Sprintf("matched %d, skipped %d", b.Matched, b.Skipped))
	if err != nil {
		return err
	}
	back(w, r, "/dead-letters", fmt.Sprintf("%s: %d %s", target, b.Changed, pastOf(a)))
	return nil
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
	}
	return string(a)
}
