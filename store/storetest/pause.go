package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// pauseTests check the optional store.Pauser capability, when the driver
// has it.
var pauseTests = map[string]func(*testing.T, *harness){
	"PauseAndResumeRoundTrip": func(t *testing.T, h *harness) {
		p := pauser(h)
		h.wantPauses(p, nil)
		before := h.now()
		got, err := p.Pause(h.ctx, store.Pause{Scope: store.ScopeQueue, Name: "mail", Who: "local"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Scope != store.ScopeQueue || got.Name != "mail" || got.Who != "local" {
			t.Errorf("pause returned %+v, want queue mail by local", got)
		}
		if got.Since.Before(before.Add(-time.Millisecond)) || got.Since.After(h.now().Add(time.Millisecond)) {
			t.Errorf("pause since %v, want the store's now (%v or after)", got.Since, before)
		}
		h.wantPauses(p, []store.Pause{got})
		if ok, err := p.Resume(h.ctx, store.ScopeQueue, "mail"); err != nil || !ok {
			t.Fatalf("resume of the pause: %v (%v), want true", ok, err)
		}
		h.wantPauses(p, nil)
		if ok, err := p.Resume(h.ctx, store.ScopeQueue, "mail"); err != nil || ok {
			t.Errorf("resume again: %v (%v), want false: the pause has ended", ok, err)
		}
	},
	"ClaimsLeavePausedTasksOut": func(t *testing.T, h *harness) {
		p := pauser(h)
		h.enqueue(task.NewTask{Kind: "send", Queue: "mail"}, task.NewTask{Kind: "charge"}, task.NewTask{Kind: "send", Tenant: "acme"},
			task.NewTask{Kind: "send"})
		for _, ps := range []store.Pause{{Scope: store.ScopeQueue, Name: "mail"}, {Scope: store.ScopeKind, Name: "charge"}, {Scope: store.ScopeTenant, Name: "acme"}} {
			if _, err := p.Pause(h.ctx, ps); err != nil {
				t.Fatal(err)
			}
		}
		// A claimer whose view of the pauses is stale asks for everything:
		// the claim itself leaves the paused tasks out.
		got := h.claim(store.ClaimRequest{Limit: 10, Kinds: []string{"send", "charge"}})
		if len(got) != 1 || got[0].Queue == "mail" || got[0].Kind == "charge" || got[0].Tenant == "acme" {
			t.Fatalf("claimed %+v while the queue mail, the kind charge and the tenant acme were paused, want the one task of none", got)
		}
		for _, ps := range []store.Pause{{Scope: store.ScopeQueue, Name: "mail"}, {Scope: store.ScopeKind, Name: "charge"}, {Scope: store.ScopeTenant, Name: "acme"}} {
			if _, err := p.Resume(h.ctx, ps.Scope, ps.Name); err != nil {
				t.Fatal(err)
			}
		}
		if got := h.claim(store.ClaimRequest{Limit: 10, Kinds: []string{"send", "charge"}}); len(got) != 3 {
			t.Errorf("claimed %d tasks once resumed, want the 3 paused", len(got))
		}
	},
	"PausingAgainKeepsTheFirstPause": func(t *testing.T, h *harness) {
		p := pauser(h)
		first, err := p.Pause(h.ctx, store.Pause{Scope: store.ScopeKind, Name: "send", Who: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		// Past near's millisecond, so that a second pause's Since would show.
		h.waitPast(first.Since.Add(2 * time.Millisecond))
		again, err := p.Pause(h.ctx, store.Pause{Scope: store.ScopeKind, Name: "send", Who: "bob"})
		if err != nil {
			t.Fatalf("pause of what is paused already: %v, want no error", err)
		}
		if !near(again.Since, first.Since) || again.Who != "alice" || again.Scope != first.Scope || again.Name != first.Name {
			t.Errorf("pause again returned %+v, want the first pause kept: %+v", again, first)
		}
		h.wantPauses(p, []store.Pause{first})
	},
	"PausesAtOnceKeepOneAndAllReturnIt": func(t *testing.T, h *harness) {
		p := pauser(h)
		const n = 8
		got := make([]store.Pause, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				got[i], errs[i] = p.Pause(h.ctx, store.Pause{Scope: store.ScopeTenant, Name: "acme", Who: fmt.Sprint("operator ", i)})
			})
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("pause %d of %d at once: %v, want none failed", i, n, errs[i])
			}
			if got[i].Who != got[0].Who || !near(got[i].Since, got[0].Since) {
				t.Errorf("pause %d returned %+v, pause 0 %+v: want every one to return the pause kept", i, got[i], got[0])
			}
		}
		h.wantPauses(p, got[:1])
	},
	"ResumingWhatIsNotPausedReportsFalse": func(t *testing.T, h *harness) {
		p := pauser(h)
		if ok, err := p.Resume(h.ctx, store.ScopeTenant, "acme"); err != nil || ok {
			t.Errorf("resume in an empty store: %v (%v), want false", ok, err)
		}
		kept, err := p.Pause(h.ctx, store.Pause{Scope: store.ScopeQueue, Name: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := p.Resume(h.ctx, store.ScopeTenant, "acme"); err != nil || ok {
			t.Errorf("resume of tenant acme with queue acme paused: %v (%v), want false", ok, err)
		}
		h.wantPauses(p, []store.Pause{kept})
	},
	"PausesAreListedByScopeThenName": func(t *testing.T, h *harness) {
		p := pauser(h)
		for _, in := range []store.Pause{
			{Scope: store.ScopeTenant, Name: "b"}, {Scope: store.ScopeQueue, Name: "z", Who: "local"},
			{Scope: store.ScopeKind, Name: "m"}, {Scope: store.ScopeQueue, Name: "a"},
			{Scope: store.ScopeTenant, Name: "a"}, {Scope: store.ScopeKind, Name: "a"},
		} {
			got, err := p.Pause(h.ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Who != in.Who {
				t.Errorf("pause of %s %s returned who %q, want %q", in.Scope, in.Name, got.Who, in.Who)
			}
		}
		ps, err := p.Pauses(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, q := range ps {
			order = append(order, string(q.Scope)+" "+q.Name)
		}
		want := "kind a, kind m, queue a, queue z, tenant a, tenant b"
		if got := strings.Join(order, ", "); got != want {
			t.Errorf("pauses listed as %s, want %s", got, want)
		}
	},
	"RefusesABadScopeOrName": func(t *testing.T, h *harness) {
		p := pauser(h)
		for _, in := range []store.Pause{
			{Scope: "", Name: "mail"}, {Scope: store.ScopeGroup, Name: "smtp"}, {Scope: "Queue", Name: "mail"},
			{Scope: store.ScopeQueue, Name: ""}, {Scope: store.ScopeTenant, Name: strings.Repeat("x", 201)},
		} {
			_, err := p.Pause(h.ctx, in)
			wantErr(t, err, task.ErrInvalid)
			_, err = p.Resume(h.ctx, in.Scope, in.Name)
			wantErr(t, err, task.ErrInvalid)
		}
		h.wantPauses(p, nil)
	},
}

// pauser returns the store's store.Pauser, or skips the test: Pauser is
// optional.
func pauser(h *harness) store.Pauser {
	h.t.Helper()
	p, ok := h.s.(store.Pauser)
	if !ok {
		h.t.Skipf("the store (%T) is not a store.Pauser (optional)", h.s)
	}
	return p
}

// wantPauses checks the store's list of pauses against want, in order,
// with each Since to the millisecond.
func (h *harness) wantPauses(p store.Pauser, want []store.Pause) {
	h.t.Helper()
	got, err := p.Pauses(h.ctx)
	if err != nil {
		h.t.Fatalf("pauses: %v", err)
	}
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		g, w := got[i], want[i]
		same = g.Scope == w.Scope && g.Name == w.Name && g.Who == w.Who && near(g.Since, w.Since)
	}
	if !same {
		h.t.Errorf("pauses %+v, want %+v", got, want)
	}
}
