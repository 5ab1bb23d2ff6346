package storetest

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// listTests check ListTasks: every field of task.Filter, and paging by
// id in both directions.
var listTests = map[string]func(*testing.T, *harness){
	"FiltersByGroupTenantAndFingerprint": func(t *testing.T, h *harness) {
		ts := h.enqueue(
			task.NewTask{Kind: "a", Group: "smtp", Tenant: "acme"},
			task.NewTask{Kind: "b", Group: "smtp", Tenant: "globex"},
			task.NewTask{Kind: "c", Group: "payments", Tenant: "acme"},
		)
		a := h.take("a")
		h.finish(store.Finish{TaskID: a.ID, Token: a.LeaseToken, State: task.Failed, Error: "boom", Fingerprint: "fp1"})
		b := h.take("b")
		h.finish(store.Finish{TaskID: b.ID, Token: b.LeaseToken, State: task.Failed, Error: "boom", Fingerprint: "fp2"})
		h.wantList(task.Filter{Group: "smtp"}, ts[0].ID, ts[1].ID)
		h.wantList(task.Filter{Tenant: "acme"}, ts[0].ID, ts[2].ID)
		h.wantList(task.Filter{Group: "smtp", Tenant: "acme"}, ts[0].ID)
		h.wantList(task.Filter{Fingerprint: "fp2"}, ts[1].ID)
		h.wantList(task.Filter{Fingerprint: "fp1", Tenant: "globex"})
	},
	"NameIsMatchedExactly": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "nightly", Tasks: []task.NewTask{
			{Name: "extract", Kind: "exec"}, {Name: "load", Kind: "exec", Needs: []string{"extract"}},
		}})
		ts := h.enqueue(task.NewTask{Kind: "exec", Name: "extract"}, task.NewTask{Kind: "exec", Name: "extractor"}, job("exec"))
		inRun := h.list(task.Filter{RunID: r.ID, Name: "extract"})
		if len(inRun) != 1 {
			t.Fatalf("the run's tasks named extract: %d, want 1", len(inRun))
		}
		h.wantList(task.Filter{Name: "extract"}, inRun[0], ts[0].ID)
		h.wantList(task.Filter{Name: "extract", Kind: "exec", RunID: r.ID}, inRun[0])
		h.wantList(task.Filter{Name: "Extract"})
		h.wantList(task.Filter{Name: "extractor"}, ts[1].ID)
	},
	"IDsKeepTheTasksNamed": func(t *testing.T, h *harness) {
		ts := h.enqueue(job("a"), job("b"), job("c"), job("d"))
		h.wantList(task.Filter{IDs: []int64{ts[3].ID, ts[1].ID, ts[3].ID + 1000}}, ts[1].ID, ts[3].ID)
		h.wantList(task.Filter{IDs: []int64{ts[0].ID, ts[2].ID}, Kind: "c"}, ts[2].ID)
	},
	"TextMatchesArgsErrorOrNameWithoutCase": func(t *testing.T, h *harness) {
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "Nightly-Report", Kind: "n"}}})
		named := h.list(task.Filter{RunID: r.ID})[0]
		ts := h.enqueue(
			task.NewTask{Kind: "a", Args: json.RawMessage(`{"user":"Alice"}`)},
			task.NewTask{Kind: "b", Args: json.RawMessage(`{"share":"50%"}`)},
			task.NewTask{Kind: "c", Args: json.RawMessage(`{"user":"bob"}`)},
			task.NewTask{Kind: "d"},
		)
		d := h.take("d")
		h.finish(store.Finish{TaskID: d.ID, Token: d.LeaseToken, State: task.Failed, Error: "upstream said KaBoom"})
		h.wantList(task.Filter{Text: "ALICE"}, ts[0].ID)
		h.wantList(task.Filter{Text: `"user"`}, ts[0].ID, ts[2].ID)
		h.wantList(task.Filter{Text: "kaboom"}, ts[3].ID)
		h.wantList(task.Filter{Text: "nightly-"}, named)
		// The text is a substring, not a pattern: % and _ are themselves.
		h.wantList(task.Filter{Text: "%"}, ts[1].ID)
		h.wantList(task.Filter{Text: "_"})
		h.wantList(task.Filter{Text: "alice", Kind: "c"})
	},
	"CreatedFromIncludedCreatedToExcluded": func(t *testing.T, h *harness) {
		early := h.enqueue(job("k"))[0]
		cut := h.now()
		h.waitPast(cut)
		late := h.enqueue(job("k"))[0]
		late = h.get(late.ID)
		h.wantList(task.Filter{CreatedFrom: cut}, late.ID)
		h.wantList(task.Filter{CreatedTo: cut}, early.ID)
		h.wantList(task.Filter{CreatedFrom: late.CreatedAt}, late.ID)
		h.wantList(task.Filter{CreatedTo: late.CreatedAt}, early.ID)
		h.wantList(task.Filter{CreatedFrom: cut, CreatedTo: late.CreatedAt})
	},
	"NewestFirstPagesBackwardByBeforeID": func(t *testing.T, h *harness) {
		all := ids(h.enqueue(job("k"), job("k"), job("k"), job("k"), job("k")))
		slices.Reverse(all)
		var got []int64
		for before := int64(0); ; {
			page := h.list(task.Filter{Newest: true, BeforeID: before, Limit: 2})
			if len(page) == 0 {
				break
			}
			if len(page) > 2 {
				t.Fatalf("page of %d, want at most 2", len(page))
			}
			got = append(got, page...)
			before = page[len(page)-1]
		}
		if !slices.Equal(got, all) {
			t.Errorf("pages gave %v, want %v", got, all)
		}
	},
	"AfterAndBeforeIDBoundAWindowEitherWay": func(t *testing.T, h *harness) {
		ts := ids(h.enqueue(job("k"), job("k"), job("k"), job("k"), job("k")))
		h.wantList(task.Filter{AfterID: ts[0], BeforeID: ts[4]}, ts[1], ts[2], ts[3])
		h.wantList(task.Filter{AfterID: ts[0], BeforeID: ts[4], Newest: true}, ts[3], ts[2], ts[1])
		h.wantList(task.Filter{AfterID: ts[0], BeforeID: ts[4], Newest: true, Limit: 1}, ts[3])
		h.wantList(task.Filter{AfterID: ts[0], Limit: 1}, ts[1])
		h.wantList(task.Filter{BeforeID: ts[0]})
	},
	"NewestDeadLettersPagedWithTheirFilters": func(t *testing.T, h *harness) {
		var dead []int64
		for i := range 5 {
			h.enqueue(job("k"))
			c := h.take("k")
			st, fp := task.DeadLetter, "fp"
			if i == 2 {
				st = task.Failed // between dead letters: not one of them
			}
			if i == 3 {
				fp = "other"
			}
			h.finish(store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: st, Error: "boom", Fingerprint: fp, Streak: 2})
			if st == task.DeadLetter {
				dead = append(dead, c.ID)
			}
		}
		h.enqueue(job("k")) // READY, newest of all
		dl := []task.State{task.DeadLetter}
		h.wantList(task.Filter{States: dl, Newest: true, Limit: 3}, dead[3], dead[2], dead[1])
		h.wantList(task.Filter{States: dl, Newest: true, Limit: 3, BeforeID: dead[1]}, dead[0])
		h.wantList(task.Filter{States: dl, Newest: true, Fingerprint: "fp", BeforeID: dead[3]}, dead[1], dead[0])
		h.wantList(task.Filter{States: []task.State{task.DeadLetter, task.Ready}, Newest: true, Limit: 2, Kind: "k"},
			h.list(task.Filter{States: []task.State{task.Ready}})[0], dead[3])
	},
}

// wantList checks that f lists exactly want, in order.
func (h *harness) wantList(f task.Filter, want ...int64) {
	h.t.Helper()
	if got := h.list(f); !slices.Equal(got, want) {
		h.t.Errorf("filter %+v lists %v, want %v", f, got, want)
	}
}
