package dash_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// endTask claims the due task of kind and ends it in state.
func endTask(t *testing.T, st *sqlite.Store, kind string, state task.State) task.Task {
	t.Helper()
	ctx := context.Background()
	cs, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{kind}, Limit: 1, Lease: time.Minute})
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim a task of %s: %v (%v)", kind, cs, err)
	}
	fin := store.Finish{TaskID: cs[0].ID, Token: cs[0].LeaseToken, State: state, Error: "boom " + kind}
	if state == task.DeadLetter {
		fin.Fingerprint, fin.Streak = "fp-"+kind, 2
	}
	if state == task.Retrying {
		fin.NextAt = time.Now().Add(time.Hour)
	}
	if errs, err := st.Finish(ctx, []store.Finish{fin}); err != nil || errs[0] != nil {
		t.Fatalf("end task %d as %s: %v %v", cs[0].ID, state, err, errs)
	}
	return cs[0]
}

// TestSelectedTasks: an operator ticks tasks on the list and retries,
// cancels, replays or deletes those alone; a delete takes ended tasks
// outside runs for good, says what it left alone and why, is refused
// when it would take only a run's tasks, and the audit log counts each.
func TestSelectedTasks(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := context.Background()
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "a"}, {Kind: "a"}, {Kind: "b"}, {Kind: "c"}, {Kind: "keep"}, {Kind: "wait", RunAt: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	a1, a2 := endTask(t, st, "a", task.Failed), endTask(t, st, "a", task.Failed)
	b := endTask(t, st, "b", task.DeadLetter)
	c := endTask(t, st, "c", task.Success)
	keep := endTask(t, st, "keep", task.Failed)
	r, err := st.SubmitRun(ctx, task.NewRun{Name: "nightly", Tasks: []task.NewTask{{Name: "extract", Kind: "exec"}}})
	if err != nil {
		t.Fatal(err)
	}
	inRun := endTask(t, st, "exec", task.Failed)
	srv := newDashboard(t, st)
	_, page := get(t, srv.Client(), srv.URL+"/tasks")
	for _, want := range []string{`<form id="sel"`, `name="id" value="` + itoa(a1.ID) + `" form="sel"`, `class="selall" form="sel"`, "7 matching"} {
		if !strings.Contains(page, want) {
			t.Errorf("the tasks page lacks %q", want)
		}
	}
	csrf := csrfIn(t, page)
	act := func(action string, ids ...int64) (int, string) {
		form := url.Values{"action": {action}, "csrf": {csrf}, "filter": {"state=FAILED"}}
		for _, id := range ids {
			form.Add("id", itoa(id))
		}
		return post(t, srv.Client(), srv.URL+"/tasks/act", form)
	}
	if code, body := act("retry"); code != http.StatusBadRequest || !strings.Contains(body, "nothing selected: tick the tasks") {
		t.Errorf("an action on nothing: %d, want 400 saying nothing is selected", code)
	}
	if code, body := act("retry", a1.ID, b.ID); code != http.StatusOK || !strings.Contains(body, "tasks "+itoa(a1.ID)+", "+itoa(b.ID)+": 1 task retried (1 had moved on or do not apply)") {
		t.Errorf("retry of a failed task and a dead letter: %d\n%s", code, body)
	}
	if got, _ := st.GetTask(ctx, a1.ID); got.State != task.Ready {
		t.Errorf("the retried task is %s, want READY", got.State)
	}
	if code, body := act("replay", b.ID); code != http.StatusOK || !strings.Contains(body, "task "+itoa(b.ID)+": 1 task replayed") {
		t.Errorf("replay of a ticked dead letter: %d\n%s", code, body)
	}
	endTask(t, st, "b", task.DeadLetter)
	if code, body := act("cancel", a1.ID); code != http.StatusOK || !strings.Contains(body, "1 task cancelled") {
		t.Errorf("cancel of a ticked task: %d\n%s", code, body)
	}
	// A delete of a run's task alone is refused, saying why.
	if code, body := act("delete", inRun.ID); code != http.StatusBadRequest || !strings.Contains(body, "nothing deleted: 1 task belong to runs") ||
		!strings.Contains(body, "they go with their run when retention prunes it") {
		t.Errorf("delete of a run's task: %d, want 400 saying a run's tasks go with their run\n%s", code, body)
	}
	wait, err := st.ListTasks(ctx, task.Filter{Kind: "wait"})
	if err != nil || len(wait) != 1 {
		t.Fatal(wait, err)
	}
	code, body := act("delete", a1.ID, a2.ID, b.ID, c.ID, inRun.ID, wait[0].ID)
	if code != http.StatusOK || !strings.Contains(body, ": 4 tasks deleted for good; 1 left alone in a run") || !strings.Contains(body, "1 left alone not ended (cancel them first)") {
		t.Errorf("delete of ticked tasks: %d\n%s", code, body)
	}
	for _, id := range []int64{a1.ID, a2.ID, b.ID, c.ID} {
		if _, err := st.GetTask(ctx, id); !errors.Is(err, task.ErrNotFound) {
			t.Errorf("task %d after its delete: %v, want not found", id, err)
		}
	}
	for _, id := range []int64{keep.ID, inRun.ID, wait[0].ID} {
		if _, err := st.GetTask(ctx, id); err != nil {
			t.Errorf("task %d, not ticked or left alone: %v", id, err)
		}
	}
	log, err := st.AuditLog(ctx, 0, 1)
	if err != nil || len(log) != 1 || log[0].Action != "delete" || log[0].Count != 4 || !strings.Contains(log[0].Target, "tasks "+itoa(a1.ID)) {
		t.Errorf("audit log %+v (%v), want the delete of 4 tasks", log, err)
	}
	// Every matching task: the delete on a filter, confirmed; a run's
	// filter is refused.
	if code, body := post(t, srv.Client(), srv.URL+"/tasks/act", url.Values{"action": {"delete"}, "csrf": {csrf}, "confirm": {"all"}, "filter": {"state=FAILED&run=" + itoa(r.ID)}}); code != http.StatusBadRequest || !strings.Contains(body, "a run's tasks are not deleted one by one") {
		t.Errorf("delete of a run's tasks by filter: %d\n%s", code, body)
	}
	if code, body := post(t, srv.Client(), srv.URL+"/tasks/act", url.Values{"action": {"delete"}, "csrf": {csrf}, "confirm": {"all"}, "filter": {"state=FAILED"}}); code != http.StatusOK || !strings.Contains(body, "state=FAILED: 1 task deleted for good; 1 left alone in a run") {
		t.Errorf("delete of every FAILED task: %d\n%s", code, body)
	}
	if _, err := st.GetTask(ctx, keep.ID); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("the FAILED task outside runs after the delete of every FAILED task: %v", err)
	}
}

// TestAllMatchingIsCounted: the tasks page says how many tasks its
// filter selects: all, when one page shows them; else, asked, a count of
// every page, which the bulk form repeats, with thousands separated.
func TestAllMatchingIsCounted(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	var nts []task.NewTask
	for range 1234 {
		nts = append(nts, task.NewTask{Kind: "sync", RunAt: time.Now().Add(time.Hour)})
	}
	if _, err := st.Enqueue(context.Background(), nts); err != nil {
		t.Fatal(err)
	}
	srv := newDashboard(t, st)
	_, page := get(t, srv.Client(), srv.URL+"/tasks?state=READY")
	if strings.Contains(page, "1,234 matching") || !strings.Contains(page, `href="/tasks?count=1&state=READY#bulk">all matching →`) {
		t.Errorf("a page of many: want a link that counts them all, not a count")
	}
	_, page = get(t, srv.Client(), srv.URL+"/tasks?state=READY&count=1")
	for _, want := range []string{"1,234 matching", "all 1,234 matching →", "Act on all 1,234 matching tasks", `data-confirm="Delete {n} for good`} {
		if !strings.Contains(page, want) {
			t.Errorf("the counted page lacks %q", want)
		}
	}
	if strings.Contains(page, `value="delete" data-confirm="Delete all`) {
		t.Errorf("a delete of every READY task is offered: they have not ended")
	}
	// The overview's counts are separated too.
	if _, page := get(t, srv.Client(), srv.URL+"/"); !strings.Contains(page, `<div class="v">1,234</div>`) || !strings.Contains(page, `>1,234</a>`) {
		t.Errorf("the overview does not show 1,234 waiting tasks, in its tile and its queue's row")
	}
	_, page = get(t, srv.Client(), srv.URL+"/tasks?state=SUCCESS")
	if strings.Contains(page, `id="bulk"`) {
		t.Errorf("the bulk form on a filter that selects nothing")
	}
}

// TestSelectedDeadLetterGroups: the dead letters page ticks groups, and
// acts on those alone: a replay of one, a delete of two.
func TestSelectedDeadLetterGroups(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := context.Background()
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "a"}, {Kind: "a"}, {Kind: "b"}, {Kind: "c"}}); err != nil {
		t.Fatal(err)
	}
	endTask(t, st, "a", task.DeadLetter)
	endTask(t, st, "a", task.DeadLetter)
	b := endTask(t, st, "b", task.DeadLetter)
	c := endTask(t, st, "c", task.DeadLetter)
	srv := newDashboard(t, st)
	_, page := get(t, srv.Client(), srv.URL+"/dead-letters")
	if !strings.Contains(page, `<form id="dlsel"`) || !strings.Contains(page, `name="fingerprint" value="fp-a" form="dlsel"`) {
		t.Fatalf("the dead letters page has no boxes to tick its groups")
	}
	csrf := csrfIn(t, page)
	act := func(action string, fps ...string) (int, string) {
		return post(t, srv.Client(), srv.URL+"/dead-letters/act", url.Values{"action": {action}, "csrf": {csrf}, "fingerprint": fps})
	}
	if code, body := act("delete"); code != http.StatusBadRequest || !strings.Contains(body, "no dead-letter group selected") {
		t.Errorf("a delete of no group: %d", code)
	}
	if code, body := act("replay", "fp-c"); code != http.StatusOK || !strings.Contains(body, "dead letters with fingerprint fp-c: 1 replayed") {
		t.Errorf("replay of a ticked group: %d\n%s", code, body)
	}
	code, body := act("delete", "fp-a", "fp-b")
	if code != http.StatusOK || !strings.Contains(body, "dead letters with fingerprint fp-a: 2 deleted for good; dead letters with fingerprint fp-b: 1 deleted for good") {
		t.Errorf("delete of two ticked groups: %d\n%s", code, body)
	}
	if _, err := st.GetTask(ctx, b.ID); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("a deleted dead letter: %v, want not found", err)
	}
	if got, err := st.GetTask(ctx, c.ID); err != nil || got.State != task.Ready {
		t.Errorf("the replayed dead letter: %s (%v), want READY", got.State, err)
	}
	log, err := st.AuditLog(ctx, 0, 0)
	if err != nil || len(log) != 3 || log[0].Action != "delete" || log[0].Count != 1 || log[1].Count != 2 || log[1].Target != "dead letters with fingerprint fp-a" {
		t.Errorf("audit log %+v (%v), want the replay, then the deletes of 2 and 1", log, err)
	}
}
