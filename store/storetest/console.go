package storetest

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// consoleTests check the optional store.Console capability, when the
// driver has it: the dashboard's reads.
var consoleTests = map[string]func(*testing.T, *harness){
	"RunsNewestFirstPagedAndByState": func(t *testing.T, h *harness) {
		c := console(h)
		var runs []int64
		for _, name := range []string{"r0", "r1", "r2", "r3", "r4"} {
			runs = append(runs, h.submit(task.NewRun{Name: name, Tasks: []task.NewTask{node(name)}}).ID)
		}
		h.endKind("r1", task.Success)
		h.endKind("r3", task.Success)
		var got []int64
		for before := int64(0); ; {
			page := h.runs(c, task.RunFilter{BeforeID: before, Limit: 2})
			if len(page) == 0 {
				break
			}
			if len(page) > 2 {
				t.Fatalf("page of %d runs, want at most 2", len(page))
			}
			got = append(got, page...)
			before = page[len(page)-1]
		}
		want := slices.Clone(runs)
		slices.Reverse(want)
		if !slices.Equal(got, want) {
			t.Errorf("pages of runs %v, want %v", got, want)
		}
		if got := h.runs(c, task.RunFilter{States: []task.State{task.Success}}); !slices.Equal(got, []int64{runs[3], runs[1]}) {
			t.Errorf("successful runs %v, want %v", got, []int64{runs[3], runs[1]})
		}
		if got := h.runs(c, task.RunFilter{States: []task.State{task.Running, task.Success}, BeforeID: runs[3], Limit: 2}); !slices.Equal(got, []int64{runs[2], runs[1]}) {
			t.Errorf("running or successful runs before %d: %v, want %v", runs[3], got, []int64{runs[2], runs[1]})
		}
	},
	"RunsByName": func(t *testing.T, h *harness) {
		c := console(h)
		var runs []int64
		for _, name := range []string{"nightly", "hourly", "nightly", "nightly"} {
			runs = append(runs, h.submit(task.NewRun{Name: name, Tasks: []task.NewTask{node("n")}}).ID)
		}
		if got, want := h.runs(c, task.RunFilter{Name: "nightly"}), []int64{runs[3], runs[2], runs[0]}; !slices.Equal(got, want) {
			t.Errorf("runs named nightly: %v, want %v", got, want)
		}
		if got, want := h.runs(c, task.RunFilter{Name: "nightly", BeforeID: runs[3], Limit: 1}), []int64{runs[2]}; !slices.Equal(got, want) {
			t.Errorf("a page of the runs named nightly before %d: %v, want %v", runs[3], got, want)
		}
		if got := h.runs(c, task.RunFilter{Name: "nightly", States: []task.State{task.Success}}); len(got) != 0 {
			t.Errorf("successful runs named nightly: %v, want none", got)
		}
		if got := h.runs(c, task.RunFilter{Name: "Nightly"}); len(got) != 0 {
			t.Errorf("runs named Nightly: %v, want none (names are matched exactly)", got)
		}
	},
	"DeadLettersGroupedByFingerprint": func(t *testing.T, h *harness) {
		c := console(h)
		if gs := h.deadLetterGroups(c); len(gs) != 0 {
			t.Fatalf("groups of an empty store: %+v, want none", gs)
		}
		dead := func(kind, fp, msg string, st task.State) task.Task {
			h.enqueue(job(kind))
			x := h.take(kind)
			h.finish(store.Finish{TaskID: x.ID, Token: x.LeaseToken, State: st, Error: msg, Fingerprint: fp, Streak: 2,
				NextAt: h.now().Add(time.Hour)})
			return h.get(x.ID)
		}
		first := dead("a", "fp1", "first", task.DeadLetter)
		dead("b", "fp2", "lone", task.DeadLetter)
		dead("a", "fp1", "failed, not dead", task.Failed)
		dead("a", "fp1", "retrying, not dead", task.Retrying)
		second := dead("b", "fp1", "second", task.DeadLetter)
		last := dead("a", "fp1", "last", task.DeadLetter)

		gs := h.deadLetterGroups(c)
		if len(gs) != 2 || gs[0].Fingerprint != "fp1" || gs[1].Fingerprint != "fp2" {
			t.Fatalf("groups %+v, want fp1 (3 tasks) then fp2 (1)", gs)
		}
		g := gs[0]
		if g.Count != 3 || g.Sample != "last" || g.SampleTask != last.ID || !slices.Equal(g.Kinds, []string{"a", "b"}) {
			t.Errorf("group fp1 %+v, want 3 tasks of kinds [a b], the sample task %d's error \"last\"", g, last.ID)
		}
		if !near(g.FirstAt, first.FinishedAt) || !near(g.LastAt, last.FinishedAt) {
			t.Errorf("group fp1 from %v to %v, want from %v to %v", g.FirstAt, g.LastAt, first.FinishedAt, last.FinishedAt)
		}
		if g := gs[1]; g.Count != 1 || g.Sample != "lone" || !slices.Equal(g.Kinds, []string{"b"}) || !g.FirstAt.Equal(g.LastAt) {
			t.Errorf("group fp2 %+v, want one task of kind b, error \"lone\"", g)
		}
		// A replayed dead letter leaves its group; the sample is then the
		// newest of those left.
		if _, err := h.s.Act(h.ctx, last.ID, task.ActReplay); err != nil {
			t.Fatal(err)
		}
		gs = h.deadLetterGroups(c)
		if len(gs) != 2 || gs[0].Fingerprint != "fp1" || gs[0].Count != 2 || gs[0].SampleTask != second.ID ||
			gs[0].Sample != "second" || !near(gs[0].LastAt, second.FinishedAt) || gs[1].Count != 1 {
			t.Errorf("after a replay: groups %+v, want fp1 (2 tasks, sample task %d) and fp2 (1)", gs, second.ID)
		}
	},
	"SeriesCountsEachOutcomeInItsBucket": func(t *testing.T, h *harness) {
		c := console(h)
		now := h.now()
		since := now.Add(-2 * time.Hour)
		// Two attempts that failed earlier: one before the window, one in
		// its first bucket.
		h.failedAt("old", now.Add(-3*time.Hour))
		h.failedAt("early", now.Add(-90*time.Minute))
		// Ended now, in the last bucket: a plain success (some drivers
		// write no attempt row for it), a success with output, and each
		// other outcome.
		h.endWith(job("ok"), store.Finish{State: task.Success})
		h.endWith(job("ok2"), store.Finish{State: task.Success, Attempt: task.Attempt{Output: "done"}})
		h.endWith(job("e"), store.Finish{State: task.Retrying, Error: "blip", NextAt: now.Add(time.Hour)})
		h.endWith(job("f"), store.Finish{State: task.Failed, Error: "no"})
		h.endWith(job("d"), store.Finish{State: task.DeadLetter, Error: "poison", Fingerprint: "fp", Streak: 2})
		h.endWith(job("t"), store.Finish{State: task.Retrying, NextAt: now.Add(time.Hour),
			Attempt: task.Attempt{Outcome: task.OutcomeTimeout}})
		h.endWith(job("s"), store.Finish{State: task.Sensing, NextAt: now.Add(time.Hour), Refund: true})
		h.enqueue(job("running"))
		h.take("running")

		bs := h.series(c, since, time.Hour)
		if len(bs) != 3 {
			t.Fatalf("%d buckets of an hour over two hours and a bit, want 3: %+v", len(bs), bs)
		}
		for i, b := range bs {
			if !b.At.Equal(since.Add(time.Duration(i) * time.Hour)) {
				t.Errorf("bucket %d at %v, want %v", i, b.At, since.Add(time.Duration(i)*time.Hour))
			}
		}
		wantOutcomes(t, "first bucket", bs[0].Outcomes, map[task.Outcome]int{task.OutcomeError: 1})
		wantOutcomes(t, "second bucket", bs[1].Outcomes, map[task.Outcome]int{})
		wantOutcomes(t, "last bucket", bs[2].Outcomes, map[task.Outcome]int{
			task.OutcomeSuccess: 2, task.OutcomeError: 3, task.OutcomeTimeout: 1, task.OutcomeSnoozed: 1,
		})
	},
	"SeriesCountsTheSuccessesOfEveryKindAndName": func(t *testing.T, h *harness) {
		c := console(h)
		since := h.now()
		for _, nt := range []task.NewTask{job("k"), {Kind: "k", Name: "b"}, {Kind: "k", Name: "a"}, job("j"), {Kind: "j", Name: "a"}, {Kind: "k", Name: "a"}} {
			h.attemptFor(nt, 0, store.Finish{State: task.Success})
		}
		bs := h.series(c, since, time.Hour)
		if len(bs) != 1 {
			t.Fatalf("%d buckets, want 1: %+v", len(bs), bs)
		}
		wantOutcomes(t, "the bucket", bs[0].Outcomes, map[task.Outcome]int{task.OutcomeSuccess: 6})
	},
	"SeriesWindowStartsAtSince": func(t *testing.T, h *harness) {
		c := console(h)
		h.endWith(job("before"), store.Finish{State: task.Success})
		h.endWith(job("before"), store.Finish{State: task.Failed, Error: "no"})
		since := h.now()
		h.waitPast(since)
		h.endWith(job("after"), store.Finish{State: task.Success})
		bs := h.series(c, since, time.Hour)
		if len(bs) != 1 {
			t.Fatalf("%d buckets, want 1: %+v", len(bs), bs)
		}
		wantOutcomes(t, "the bucket", bs[0].Outcomes, map[task.Outcome]int{task.OutcomeSuccess: 1})
	},
	"RunCountsByState": func(t *testing.T, h *harness) {
		c := console(h)
		a := h.submit(task.NewRun{Name: "a", Tasks: []task.NewTask{node("a1"), node("a2", "a1"), node("a3", "a1")}})
		b := h.submit(task.NewRun{Name: "b", Tasks: []task.NewTask{node("b1")}})
		h.enqueue(job("loose"))
		h.endKind("a1", task.Success)
		got, err := c.RunCounts(h.ctx, []int64{a.ID, b.ID, b.ID + 1000})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]map[task.State]int{a.ID: {task.Success: 1, task.Ready: 2}, b.ID: {task.Ready: 1}}
		if len(got) != len(want) || !maps.Equal(got[a.ID], want[a.ID]) || !maps.Equal(got[b.ID], want[b.ID]) {
			t.Errorf("run counts %v, want %v", got, want)
		}
		if got, err := c.RunCounts(h.ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("run counts of no run: %v (%v), want none", got, err)
		}
	},
	"DeleteTasksTakesEndedTasksOutsideRuns": func(t *testing.T, h *harness) {
		c := console(h)
		r := h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{node("step")}})
		h.endKind("step", task.Failed)
		step := h.list(task.Filter{RunID: r.ID})[0]
		ts := h.enqueue(job("ok"), job("bad"), job("dead"), job("waits"), job("runs"))
		ok := h.endKind("ok", task.Success)
		bad := h.take("bad")
		h.finish(store.Finish{TaskID: bad.ID, Token: bad.LeaseToken, State: task.Failed, Error: "no"})
		dead := h.take("dead")
		h.finish(store.Finish{TaskID: dead.ID, Token: dead.LeaseToken, State: task.DeadLetter, Error: "poison", Fingerprint: "fp", Streak: 2})
		running := h.take("runs")
		gone, err := c.DeleteTasks(h.ctx, []int64{ts[4].ID, step, ts[3].ID, dead.ID, bad.ID, ok.ID, ok.ID + 1000})
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{ok.ID, bad.ID, dead.ID}; !slices.Equal(gone, want) {
			t.Errorf("deleted %v, want the ended tasks outside runs %v", gone, want)
		}
		h.wantGone(ok.ID, bad.ID, dead.ID)
		for _, id := range []int64{step, ts[3].ID, running.ID} {
			h.get(id) // still there
		}
		if as, err := h.s.Attempts(h.ctx, bad.ID); !errors.Is(err, task.ErrNotFound) {
			t.Errorf("the deleted task's attempts: %v (%v), want not found", as, err)
		}
		if got := h.deadLetterGroups(c); len(got) != 0 {
			t.Errorf("dead letter groups after the dead letter's delete: %+v, want none", got)
		}
		if gone, err := c.DeleteTasks(h.ctx, []int64{ok.ID}); err != nil || len(gone) != 0 {
			t.Errorf("a second delete: %v (%v), want nothing deleted", gone, err)
		}
		// The running task's lease still holds: it ends as it would have.
		h.end(running, task.Success)
	},
	"SeriesRefusesABadStep": func(t *testing.T, h *harness) {
		c := console(h)
		now := h.now()
		for _, step := range []time.Duration{0, -time.Second, time.Nanosecond} {
			_, err := c.AttemptSeries(h.ctx, now.Add(-time.Hour), step)
			wantErr(t, err, task.ErrInvalid)
		}
	},
}

// auditTests check the optional store.Auditor capability.
var auditTests = map[string]func(*testing.T, *harness){
	"EntriesComeBackNewestFirstPagedByID": func(t *testing.T, h *harness) {
		a := auditor(h)
		if es, err := a.AuditLog(h.ctx, 0, 0); err != nil || len(es) != 0 {
			t.Fatalf("log of an empty store: %v (%v), want none", es, err)
		}
		given := h.now().Add(-time.Minute)
		in := []store.AuditEntry{
			{Who: "local", Action: "replay", Target: "task 42", Count: 1},
			{Who: "token 3f9a", Action: "breaker close", Target: "group smtp", Detail: "ramp 30s", At: given},
			{Who: "local", Action: "cancel", Target: "state=READY kind=k", Count: 17},
		}
		var out []store.AuditEntry
		for _, e := range in {
			before := h.now()
			got, err := a.Audit(h.ctx, e)
			if err != nil {
				t.Fatalf("audit %+v: %v", e, err)
			}
			want := e
			want.ID = got.ID
			if e.At.IsZero() {
				if got.At.Before(before.Add(-time.Millisecond)) || got.At.After(h.now().Add(time.Millisecond)) {
					t.Errorf("entry %+v: at %v, want the store's now (%v or after)", got, got.At, before)
				}
				want.At = got.At
			}
			if !near(got.At, want.At) || got.ID == 0 || got.Who != want.Who || got.Action != want.Action ||
				got.Target != want.Target || got.Count != want.Count || got.Detail != want.Detail {
				t.Errorf("audit returned %+v, want %+v", got, want)
			}
			if len(out) > 0 && got.ID <= out[len(out)-1].ID {
				t.Errorf("entry id %d after id %d: ids must grow", got.ID, out[len(out)-1].ID)
			}
			out = append(out, got)
		}
		slices.Reverse(out)
		h.wantAudit(a, 0, 0, out)
		h.wantAudit(a, 0, 2, out[:2])
		h.wantAudit(a, out[1].ID, 2, out[2:])
		h.wantAudit(a, out[2].ID, 0, nil)
	},
	"RefusesAnEntryWithoutWhoOrAction": func(t *testing.T, h *harness) {
		a := auditor(h)
		for _, e := range []store.AuditEntry{{Action: "replay"}, {Who: "local"}, {Who: " ", Action: "replay"}} {
			_, err := a.Audit(h.ctx, e)
			wantErr(t, err, task.ErrInvalid)
		}
		if es, err := a.AuditLog(h.ctx, 0, 0); err != nil || len(es) != 0 {
			t.Errorf("log after refusals: %v (%v), want none", es, err)
		}
	},
}

// console returns the store's store.Console, or skips the test: Console
// is optional.
func console(h *harness) store.Console {
	h.t.Helper()
	c, ok := h.s.(store.Console)
	if !ok {
		h.t.Skipf("the store (%T) is not a store.Console (optional)", h.s)
	}
	return c
}

// auditor returns the store's store.Auditor, or skips the test.
func auditor(h *harness) store.Auditor {
	h.t.Helper()
	a, ok := h.s.(store.Auditor)
	if !ok {
		h.t.Skipf("the store (%T) is not a store.Auditor (optional)", h.s)
	}
	return a
}

func (h *harness) runs(c store.Console, f task.RunFilter) []int64 {
	h.t.Helper()
	rs, err := c.ListRuns(h.ctx, f)
	if err != nil {
		h.t.Fatalf("list runs %+v: %v", f, err)
	}
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func (h *harness) deadLetterGroups(c store.Console) []store.DeadLetterGroup {
	h.t.Helper()
	gs, err := c.DeadLetterGroups(h.ctx)
	if err != nil {
		h.t.Fatalf("dead letter groups: %v", err)
	}
	return gs
}

func (h *harness) series(c store.Console, since time.Time, step time.Duration) []store.AttemptBucket {
	h.t.Helper()
	bs, err := c.AttemptSeries(h.ctx, since, step)
	if err != nil {
		h.t.Fatalf("attempt series since %v by %v: %v", since, step, err)
	}
	return bs
}

// endWith inserts nt, claims it and finishes its attempt as fin says.
func (h *harness) endWith(nt task.NewTask, fin store.Finish) {
	h.t.Helper()
	h.enqueue(nt)
	c := h.take(nt.Kind)
	fin.TaskID, fin.Token = c.ID, c.LeaseToken
	if err := h.finish(fin)[0]; err != nil {
		h.t.Fatalf("finish task %d as %s: %v", c.ID, fin.State, err)
	}
}

// failedAt inserts a task of kind, claims it and fails its attempt with
// an end at ended.
func (h *harness) failedAt(kind string, ended time.Time) {
	h.t.Helper()
	h.endWith(job(kind), store.Finish{State: task.Failed, Error: "boom", Attempt: task.Attempt{EndedAt: ended}})
}

func wantOutcomes(t *testing.T, what string, got, want map[task.Outcome]int) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s counts %v, want %v", what, got, want)
		return
	}
	for o, n := range want {
		if got[o] != n {
			t.Errorf("%s counts %v, want %v", what, got, want)
			return
		}
	}
}

func (h *harness) wantAudit(a store.Auditor, before int64, limit int, want []store.AuditEntry) {
	h.t.Helper()
	got, err := a.AuditLog(h.ctx, before, limit)
	if err != nil {
		h.t.Fatalf("audit log before %d, limit %d: %v", before, limit, err)
	}
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		same = got[i].ID == want[i].ID && near(got[i].At, want[i].At) && got[i].Action == want[i].Action
	}
	if !same {
		h.t.Errorf("audit log before %d, limit %d: %+v, want %+v", before, limit, got, want)
	}
}
