package storetest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func item(js, err, fp string) task.Quarantined {
	return task.Quarantined{Item: json.RawMessage(js), Error: err, Fingerprint: fp, ReplayKind: "row.fix"}
}

// quarantineTests check store.Quarantiner, the items handlers set aside.
var quarantineTests = map[string]func(*testing.T, *harness){
	"RecordsOnceFencedByTheLease": func(t *testing.T, h *harness) {
		h.enqueue(task.NewTask{Kind: "import", Queue: "bulk"})
		c := h.take("import")
		if n := h.quarantine(c, item(`{"row":3}`, "bad date", "f1"), item(`{"row":7}`, "bad date", "f1")); n != 2 {
			t.Errorf("two items: the task has %d in all, want 2", n)
		}
		// The same row again (a retried attempt) is not counted twice.
		if n := h.quarantine(c, item(`{"row":3}`, "bad date", "f1"), item(`{"row":9}`, "no such account", "f2")); n != 3 {
			t.Errorf("one new item and one again: %d in all, want 3", n)
		}
		if _, err := h.s.Quarantine(h.ctx, c.ID, c.LeaseToken+1000, []task.Quarantined{item(`1`, "e", "f")}); !errors.Is(err, task.ErrLeaseLost) {
			t.Errorf("under another token: %v, want ErrLeaseLost", err)
		}
		h.end(c, task.Success)
		if _, err := h.s.Quarantine(h.ctx, c.ID, c.LeaseToken, []task.Quarantined{item(`1`, "e", "f")}); !errors.Is(err, task.ErrLeaseLost) {
			t.Errorf("by an attempt that ended: %v, want ErrLeaseLost", err)
		}
		got := h.quarantined(task.QuarantineFilter{TaskID: c.ID})
		if len(got) != 3 {
			t.Fatalf("listed %+v, want 3 items", got)
		}
		first := got[0]
		if first.TaskID != c.ID || first.Queue != "bulk" || first.Kind != "import" || first.Attempt != 1 || first.ReplayKind != "row.fix" ||
			string(first.Item) != `{"row":3}` || first.Error != "bad date" || first.Fingerprint != "f1" || first.CreatedAt.IsZero() {
			t.Errorf("first item %+v", first)
		}
		if got[1].ID <= first.ID || string(got[2].Item) != `{"row":9}` {
			t.Errorf("items not oldest first: %+v", got)
		}
	},
	"NoItemsCountsUnderTheLease": func(t *testing.T, h *harness) {
		h.enqueue(job("import"))
		c := h.take("import")
		if n, err := h.s.Quarantine(h.ctx, c.ID, c.LeaseToken, nil); err != nil || n != 0 {
			t.Errorf("no items, none before: %d (%v), want 0", n, err)
		}
		h.quarantine(c, item(`1`, "e", "f"), item(`2`, "e", "f"))
		if n, err := h.s.Quarantine(h.ctx, c.ID, c.LeaseToken, nil); err != nil || n != 2 {
			t.Errorf("no items, two before: %d (%v), want 2", n, err)
		}
		if _, err := h.s.Quarantine(h.ctx, c.ID, c.LeaseToken+1000, nil); !errors.Is(err, task.ErrLeaseLost) {
			t.Errorf("no items under another token: %v, want ErrLeaseLost", err)
		}
	},
	"RefusesWhatCannotBeKept": func(t *testing.T, h *harness) {
		h.enqueue(job("import"))
		c := h.take("import")
		big := `"` + strings.Repeat("x", task.MaxQuarantinedItem) + `"`
		for _, js := range []string{`{`, big, ``} {
			if _, err := h.s.Quarantine(h.ctx, c.ID, c.LeaseToken, []task.Quarantined{item(`1`, "e", "f"), item(js, "e", "f")}); !errors.Is(err, task.ErrInvalid) {
				t.Errorf("item %.20q: %v, want ErrInvalid", js, err)
			}
		}
		if got := h.quarantined(task.QuarantineFilter{}); len(got) != 0 {
			t.Errorf("a refused batch was kept in part: %+v", got)
		}
	},
	"GroupsFiltersAndDrops": func(t *testing.T, h *harness) {
		h.enqueue(job("import"), job("export"))
		a, b := h.take("import"), h.take("export")
		h.quarantine(a, item(`1`, "bad date 1", "date"), item(`2`, "bad date 2", "date"), item(`3`, "no account", "acct"))
		h.quarantine(b, item(`4`, "bad date 4", "date"))
		gs, err := h.s.QuarantineGroups(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(gs) != 2 || gs[0].Fingerprint != "date" || gs[0].Count != 3 || gs[0].Sample != "bad date 4" ||
			strings.Join(gs[0].Kinds, ",") != "export,import" || gs[0].FirstAt.IsZero() || gs[0].LastAt.Before(gs[0].FirstAt) ||
			gs[1].Fingerprint != "acct" || gs[1].Count != 1 {
			t.Errorf("groups %+v", gs)
		}
		dates := h.quarantined(task.QuarantineFilter{Fingerprint: "date"})
		if len(dates) != 3 || gs[0].SampleItem != dates[2].ID {
			t.Fatalf("the date group %+v, sample %d", dates, gs[0].SampleItem)
		}
		if page := h.quarantined(task.QuarantineFilter{Fingerprint: "date", AfterID: dates[0].ID, Limit: 1}); len(page) != 1 || page[0].ID != dates[1].ID {
			t.Errorf("the second page of one: %+v, want item %d", page, dates[1].ID)
		}
		if some := h.quarantined(task.QuarantineFilter{IDs: []int64{dates[0].ID, dates[2].ID}}); len(some) != 2 {
			t.Errorf("two by id: %+v", some)
		}
		n, err := h.s.DropQuarantined(h.ctx, []int64{dates[0].ID, dates[1].ID, dates[1].ID + 10_000})
		if err != nil || n != 2 {
			t.Errorf("drop two and one not there: %d, %v; want 2", n, err)
		}
		if left := h.quarantined(task.QuarantineFilter{}); len(left) != 2 {
			t.Errorf("after the drop: %+v, want 2 left", left)
		}
	},
	"OutliveTheirTask": func(t *testing.T, h *harness) {
		h.enqueue(job("done"))
		d := h.take("done")
		h.quarantine(d, item(`1`, "e", "f"))
		h.end(d, task.Success)
		h.aged(d.ID)
		h.prune(h.s, store.PruneRequest{Rules: keepAll(soon), Limit: 100})
		if got := h.quarantined(task.QuarantineFilter{TaskID: d.ID}); len(got) != 1 {
			t.Errorf("a pruned task's quarantined items: %+v, want its one kept for an operator", got)
		}
	},
}

func (h *harness) quarantine(c task.Task, items ...task.Quarantined) int {
	h.t.Helper()
	n, err := h.s.Quarantine(h.ctx, c.ID, c.LeaseToken, items)
	if err != nil {
		h.t.Fatalf("quarantine: %v", err)
	}
	return n
}

func (h *harness) quarantined(f task.QuarantineFilter) []task.Quarantined {
	h.t.Helper()
	got, err := h.s.ListQuarantined(h.ctx, f)
	if err != nil {
		h.t.Fatalf("list quarantined: %v", err)
	}
	return got
}
