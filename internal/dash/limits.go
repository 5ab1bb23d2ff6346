package dash

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// limits shows the limits of running attempts and the rates, with what
// each holds back now; an operator sets a rate or a limit from it.
func (d *Dashboard) limits(w http.ResponseWriter, r *http.Request, v who) error {
	rows, err := ops.Limits(r.Context(), d.read)
	if err != nil {
		return err
	}
	d.render(w, r, v, "limits", "Limits", rows)
	return nil
}

// actLimit sets a queue's, kind's, group's or tenant's rate (rate, burst;
// a rate of 0 removes it), limit of running attempts (max; 0 removes it)
// or a tenant's weight in fair claims (weight; 1 removes it), as grit
// limits set does.
func (d *Dashboard) actLimit(w http.ResponseWriter, r *http.Request, v who) error {
	scope, name := store.Scope(r.PostFormValue("scope")), strings.TrimSpace(r.PostFormValue("name"))
	var ch ops.LimitChange
	if s := strings.TrimSpace(r.PostFormValue("max")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || scope == store.ScopeKind {
			return errBadRequest{"max " + strconv.Quote(s) + ": want a whole number of running attempts for a queue, group or tenant, or 0 to remove the limit"}
		}
		ch.Limit = &store.Limit{Scope: scope, Name: name, Max: n}
		if scope != store.ScopeGroup {
			if err := store.ValidateLimit(*ch.Limit); err != nil {
				return errBadRequest{err.Error()}
			}
		}
	}
	if s := r.PostFormValue("rate"); strings.TrimSpace(s) != "" {
		burst := r.PostFormValue("burst")
		rt, err := ops.ParseRate(store.RateKey{Scope: scope, Name: name}, s, &burst)
		if err != nil {
			return errBadRequest{err.Error()}
		}
		ch.Rate = &rt
	}
	if s := r.PostFormValue("weight"); strings.TrimSpace(s) != "" {
		if scope != store.ScopeTenant {
			return errBadRequest{"weight " + strconv.Quote(s) + ": a weight is a tenant's, in fair claims: choose the scope tenant"}
		}
		w, err := ops.ParseWeight(name, s)
		if err != nil {
			return errBadRequest{err.Error()}
		}
		ch.Weight = &w
	}
	if ch.Limit == nil && ch.Rate == nil && ch.Weight == nil {
		return errBadRequest{"give a rate (e.g. 5/s, or 0 to remove it), a max of running attempts or a tenant's weight"}
	}
	if err := ops.SetLimits(r.Context(), d.cfg.Store, ch); err != nil {
		if errors.Is(err, task.ErrInvalid) || errors.Is(err, ops.ErrNoWeights) {
			return errBadRequest{err.Error()}
		}
		return err
	}
	says := strings.Join(ch.Says(), "; ")
	d.record(r.Context(), v, "limit", string(scope)+" "+name, 0, says)
	back(w, r, "/limits", says+": workers keep to it from their next heartbeat")
	return nil
}
