package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// durationTests check store.Durations: the durations of the newest
// successful attempts of a kind and name.
var durationTests = map[string]func(*testing.T, *harness){
	"OnlySuccessesCount": func(t *testing.T, h *harness) {
		var want []ended
		want = append(want, h.attemptFor(job("k"), 30*time.Millisecond, store.Finish{State: task.Success}))
		h.attemptFor(job("k"), 10*time.Second, store.Finish{State: task.Failed, Error: "boom"})
		h.enqueue(job("k"))
		next := h.now()
		h.endAfter(h.take("k"), 20*time.Second, store.Finish{State: task.Retrying, NextAt: next, Error: "blip"})
		h.waitPast(next)
		want = append(want, h.endAfter(h.take("k"), 40*time.Millisecond, store.Finish{State: task.Success})) // its retry
		h.attemptFor(job("k"), 50*time.Second, store.Finish{State: task.DeadLetter, Error: "poison"})
		h.attemptFor(job("k"), 70*time.Second, store.Finish{State: task.Sensing, NextAt: h.now().Add(time.Hour), Refund: true})
		// A success that leaves more than its end behind (output) is
		// recorded otherwise by some drivers: it counts all the same.
		want = append(want, h.attemptFor(job("k"), 60*time.Millisecond,
			store.Finish{State: task.Success, Attempt: task.Attempt{Output: "done"}}))
		h.enqueue(job("k"))
		h.take("k") // running: no end yet
		h.wantDurations("k", "", 10, want)
	},
	"NewestFirstWithinTheLimit": func(t *testing.T, h *harness) {
		var all []ended
		for _, ms := range []int{50, 10, 40, 20, 30} {
			all = append(all, h.attemptFor(job("k"), time.Duration(ms)*time.Millisecond, store.Finish{State: task.Success}))
		}
		h.wantDurations("k", "", 10, all)
		h.wantDurations("k", "", 3, all)
		h.wantDurations("k", "", 1, all)
	},
	"ByKindAndName": func(t *testing.T, h *harness) {
		ka := h.attemptFor(task.NewTask{Name: "a", Kind: "k"}, 10*time.Millisecond, store.Finish{State: task.Success})
		kb := h.attemptFor(task.NewTask{Name: "b", Kind: "k"}, 20*time.Millisecond, store.Finish{State: task.Success})
		oa := h.attemptFor(task.NewTask{Name: "a", Kind: "other"}, 30*time.Millisecond, store.Finish{State: task.Success})
		u1 := h.attemptFor(job("k"), 40*time.Millisecond, store.Finish{State: task.Success})
		u2 := h.attemptFor(job("k"), 50*time.Millisecond, store.Finish{State: task.Success})
		h.wantDurations("k", "a", 10, []ended{ka})
		h.wantDurations("k", "b", 10, []ended{kb})
		h.wantDurations("other", "a", 10, []ended{oa})
		h.wantDurations("k", "", 10, []ended{u1, u2}) // unnamed tasks: name ""
		h.wantDurations("other", "", 10, nil)
		h.wantDurations("nosuch", "a", 10, nil)
	},
	// A task that asks for an auto timeout keeps the sentinel as is; its
	// attempts keep the timeout each ran under and how it was chosen,
	// successes among them, and count in the durations as any other.
	"AutoTimeoutKept": func(t *testing.T, h *harness) {
		nt := task.NewTask{Kind: "nightly", Timeout: task.AutoTimeout}
		run := func(nt task.NewTask, d time.Duration, fin store.Finish) (int64, ended) {
			id := h.enqueue(nt)[0].ID
			return id, h.endAfter(h.take(nt.Kind), d, fin)
		}
		ok := task.Attempt{Timeout: 30 * time.Minute, TimeoutSource: "auto: default, 0 runs so far"}
		okID, okEnd := run(nt, 20*time.Millisecond, store.Finish{State: task.Success, Attempt: ok})
		if got := h.get(okID).Timeout; got != task.AutoTimeout {
			t.Fatalf("stored timeout %v, want task.AutoTimeout", got)
		}
		late := task.Attempt{Outcome: task.OutcomeTimeout, Timeout: time.Minute, TimeoutSource: "auto: 5 × p99 20ms of 1 runs, floor",
			Class: "transient", Error: "timed out after 1m"}
		lateID, _ := run(nt, time.Minute, store.Finish{State: task.Failed, Error: "timed out after 1m", Attempt: late})
		fixedID, fixedEnd := run(job("nightly"), 10*time.Millisecond, store.Finish{State: task.Success})
		for _, c := range []struct {
			id   int64
			want task.Attempt
		}{{okID, ok}, {lateID, late}, {fixedID, task.Attempt{}}} {
			as := h.attempts(c.id)
			if len(as) != 1 || as[0].Timeout != c.want.Timeout || as[0].TimeoutSource != c.want.TimeoutSource {
				t.Errorf("task %d's attempts %+v, want one with timeout %v (%q)", c.id, as, c.want.Timeout, c.want.TimeoutSource)
			}
		}
		h.wantDurations("nightly", "", 10, []ended{okEnd, fixedEnd})
	},
}

// ended is a successful attempt: how long it took and when it ended.
type ended struct {
	d   time.Duration
	end time.Time
}

// attemptFor inserts nt (in a run of its own if it is named), claims it
// and ends its attempt d after it began, as fin says.
func (h *harness) attemptFor(nt task.NewTask, d time.Duration, fin store.Finish) ended {
	h.t.Helper()
	req := store.ClaimRequest{Kinds: []string{nt.Kind}, Limit: 2}
	if nt.Name != "" {
		req.Run = h.submit(task.NewRun{Name: "r", Tasks: []task.NewTask{nt}}).ID
	} else {
		h.enqueue(nt)
	}
	got := h.claim(req)
	if len(got) != 1 {
		h.t.Fatalf("claim %s %q: got %d tasks, want 1", nt.Kind, nt.Name, len(got))
	}
	return h.endAfter(got[0], d, fin)
}

// endAfter ends the attempt of claimed task c d after it began, as fin
// says (its task, token and attempt's end filled in).
func (h *harness) endAfter(c task.Task, d time.Duration, fin store.Finish) ended {
	h.t.Helper()
	var start time.Time
	for _, a := range h.attempts(c.ID) {
		if a.LeaseToken == c.LeaseToken {
			start = a.StartedAt
		}
	}
	if start.IsZero() {
		h.t.Fatalf("task %d has no open attempt under token %d", c.ID, c.LeaseToken)
	}
	fin.TaskID, fin.Token, fin.Attempt.EndedAt = c.ID, c.LeaseToken, start.Add(d)
	if err := h.finish(fin)[0]; err != nil {
		h.t.Fatalf("finish task %d as %s: %v", c.ID, fin.State, err)
	}
	return ended{d: d, end: fin.Attempt.EndedAt}
}

// wantDurations checks SuccessDurations(kind, name, limit): the durations
// of the newest of want, at most limit, newest first.
func (h *harness) wantDurations(kind, name string, limit int, want []ended) {
	h.t.Helper()
	want = slices.Clone(want)
	slices.SortFunc(want, func(a, b ended) int { return b.end.Compare(a.end) })
	var ds []time.Duration
	for _, e := range want[:min(limit, len(want))] {
		ds = append(ds, e.d)
	}
	got, err := h.s.SuccessDurations(h.ctx, kind, name, limit)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(ds) {
		h.t.Errorf("SuccessDurations(%s, %q, %d) = %v (%v), want %v", kind, name, limit, got, err, ds)
	}
}
