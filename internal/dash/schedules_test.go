package dash_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// schedStore is a SQLite store with three schedules, ticked from three
// hours ago (so that their tasks are due and can be claimed): heartbeat,
// every 10s, whose slots succeeded, failed and have not ended; flaky,
// which paused itself after two failed slots; etl/nightly, a cron in
// Paris that has had no slot yet.
func schedStore(t *testing.T) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	st := openStore(t)
	t0 := time.Now().Add(-3 * time.Hour).Truncate(time.Hour)
	if err := sched.Declare(ctx, st, t0,
		schedule.Schedule{Name: "heartbeat", Every: 10 * time.Second, Task: schedule.Task{Kind: "ping"}},
		schedule.Schedule{Name: "flaky", Every: 10 * time.Second, PauseAfter: 2, Task: schedule.Task{Kind: "flaky"}},
		schedule.Schedule{Name: "etl/nightly", Cron: "0 2 * * *", Zone: "Europe/Paris", Jitter: 10 * time.Second,
			Overlap: schedule.BufferOne, Task: schedule.Task{Kind: "report", Queue: "etl"}},
	); err != nil {
		t.Fatal(err)
	}
	k := &sched.Ticker{Store: st}
	at := t0
	for _, end := range []task.State{task.Success, task.Failed, ""} {
		at = at.Add(10 * time.Second)
		if err := k.Tick(ctx, at); err != nil {
			t.Fatal(err)
		}
		if end != "" {
			endAll(t, st, "ping", end)
		}
		endAll(t, st, "flaky", task.Failed)
	}
	if err := k.Tick(ctx, at.Add(sched.Watch)); err != nil { // sees flaky's failures
		t.Fatal(err)
	}
	return st
}

// endAll claims every due task of kind and ends it in state.
func endAll(t *testing.T, st store.Store, kind string, state task.State) {
	t.Helper()
	ctx := context.Background()
	got, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{kind}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var fs []store.Finish
	for _, c := range got {
		fs = append(fs, store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: state, Error: "boom",
			Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "boom"}})
	}
	if len(fs) > 0 {
		if _, err := st.Finish(ctx, fs); err != nil {
			t.Fatal(err)
		}
	}
}

// card is the part of the schedules page about schedule name.
func card(t *testing.T, page, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `id="s-`+name+`"`)
	if !ok {
		t.Fatalf("no card with the anchor s-%s on the page:\n%s", name, page)
	}
	c, _, _ := strings.Cut(rest, "</section>")
	return c
}

func idsOf(t *testing.T, st store.Store, kind string) []int64 {
	t.Helper()
	ts, err := st.ListTasks(context.Background(), task.Filter{Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, x := range ts {
		ids = append(ids, x.ID)
	}
	return ids
}

// TestSchedulesPage: each schedule has its card, with its timing, its
// task, its policies, its state, its next slots in its zone and its last
// outcomes newest first, each a link to its task.
func TestSchedulesPage(t *testing.T) {
	t.Parallel()
	st := schedStore(t)
	srv := newDashboard(t, st)
	code, page := get(t, srv.Client(), srv.URL+"/schedules")
	if code != http.StatusOK {
		t.Fatalf("GET /schedules: %d\n%s", code, page)
	}
	if !strings.Contains(page, `href="/schedules" class="on"`) || !strings.Contains(page, "3 schedules, <b class=\"bad\">1 paused</b>") {
		t.Errorf("the page is not the nav's Schedules, or does not count 3 schedules, 1 paused:\n%s", page)
	}

	hb := card(t, page, "heartbeat")
	ping := idsOf(t, st, "ping") // ascending: succeeded, failed, not ended
	if len(ping) != 3 {
		t.Fatalf("heartbeat has %d tasks, want 3", len(ping))
	}
	for _, want := range []string{"every 10s", `href="/tasks?kind=ping"`, "default", "skip", "active", "3 enqueued"} {
		if !strings.Contains(hb, want) {
			t.Errorf("heartbeat's card does not say %q:\n%s", want, hb)
		}
	}
	last, failed, first := strings.Index(hb, "task "+itoa(ping[2])), strings.Index(hb, "task "+itoa(ping[1])), strings.Index(hb, "task "+itoa(ping[0]))
	if last < 0 || !(last < failed && failed < first) {
		t.Errorf("heartbeat's outcomes are not tasks %v newest first:\n%s", ping, hb)
	}
	for _, want := range []string{`st-ready">READY`, `st-failed">FAILED`, `st-success">SUCCESS`, `href="/tasks/` + itoa(ping[0]) + `"`} {
		if !strings.Contains(hb, want) {
			t.Errorf("heartbeat's outcomes do not show %q:\n%s", want, hb)
		}
	}
	if n := strings.Count(strings.SplitN(hb, "Next slots", 2)[1], " UTC</span>"); n < 3 {
		t.Errorf("heartbeat's card shows %d next slots in UTC, want 3:\n%s", n, hb)
	}

	fl := card(t, page, "flaky")
	for _, want := range []string{"paused", "Paused itself</b> after 2 failed slots in a row", "2 failed slots in a row", "none while paused", `value="resume"`} {
		if !strings.Contains(fl, want) {
			t.Errorf("flaky's card does not say %q:\n%s", want, fl)
		}
	}

	nightly := card(t, page, "etl/nightly")
	paris, _ := time.LoadLocation("Europe/Paris")
	tm, err := schedule.Schedule{Name: "etl/nightly", Cron: "0 2 * * *", Zone: "Europe/Paris"}.Timing()
	if err != nil {
		t.Fatal(err)
	}
	next := tm.Next(time.Now())
	for _, want := range []string{"<code>0 2 * * *</code> in Europe/Paris", `href="/tasks?queue=etl"`, "buffer_one", "up to 10s",
		next.In(paris).Format("Mon 2 Jan 15:04 MST"), next.UTC().Format("Mon 2 Jan 15:04 MST"), "No slot has had a task yet", `value="pause"`, `value="trigger"`} {
		if !strings.Contains(nightly, want) {
			t.Errorf("etl/nightly's card does not say %q:\n%s", want, nightly)
		}
	}

	// A row this grit cannot read (a declaration of a newer one) has its
	// card, which says what is wrong, and no buttons.
	if _, _, err := st.WriteSchedule(context.Background(), store.ScheduleWrite{Name: "newer", Def: []byte(`{"name":"newer","cron":"@fortnightly"}`),
		Then: func([]task.Enqueued) (json.RawMessage, time.Time, error) { return []byte(`{}`), time.Time{}, nil }}); err != nil {
		t.Fatal(err)
	}
	_, page = get(t, srv.Client(), srv.URL+"/schedules")
	if c := card(t, page, "newer"); !strings.Contains(c, "unreadable") || !strings.Contains(c, `cron "@fortnightly"`) || strings.Contains(c, "<form") {
		t.Errorf("the unreadable schedule's card:\n%s", c)
	}

	// The overview counts them.
	if _, ov := get(t, srv.Client(), srv.URL+"/"); !strings.Contains(ov, `href="/schedules"><div class="k">Schedules</div><div class="v">4</div>`) ||
		!strings.Contains(ov, "1 paused") {
		t.Errorf("the overview does not count 4 schedules, 1 paused")
	}
}

// TestScheduleActions: pause (with a reason), resume and trigger work
// from the page's forms, each written to the audit log; a schedule not
// in the store is a 404 that names it.
func TestScheduleActions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := schedStore(t)
	srv := newDashboard(t, st)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	_, page := get(t, srv.Client(), srv.URL+"/schedules")
	csrf := csrfIn(t, page)
	act := func(name, action string, more ...string) (int, string) {
		form := url.Values{"csrf": {csrf}, "name": {name}, "action": {action}}
		for i := 0; i+1 < len(more); i += 2 {
			form.Set(more[i], more[i+1])
		}
		return post(t, srv.Client(), srv.URL+"/schedules/act", form)
	}

	code, body := act("heartbeat", "pause", "reason", "the API is down <for now>")
	if code != http.StatusOK || !strings.Contains(body, "schedule heartbeat: paused") {
		t.Fatalf("pause: %d\n%s", code, body)
	}
	if hb := card(t, body, "heartbeat"); !strings.Contains(hb, "Paused by local</b>") || !strings.Contains(hb, "the API is down <for now>") || !strings.Contains(hb, "none while paused") {
		t.Errorf("after the pause, heartbeat's card:\n%s", hb)
	}
	if _, body := act("heartbeat", "pause"); !strings.Contains(body, "was paused already") {
		t.Errorf("a second pause does not say it was paused already:\n%s", body)
	}
	if _, body := act("heartbeat", "resume"); !strings.Contains(body, "schedule heartbeat: resumed") || !strings.Contains(card(t, body, "heartbeat"), "active") {
		t.Errorf("resume:\n%s", body)
	}
	before := len(idsOf(t, st, "report"))
	code, body = act("etl/nightly", "trigger")
	if code != http.StatusOK || !strings.Contains(body, "schedule etl/nightly: triggered task") {
		t.Fatalf("trigger: %d\n%s", code, body)
	}
	if n := len(idsOf(t, st, "report")); n != before+1 {
		t.Errorf("the trigger made %d tasks, want 1", n-before)
	}
	if c := card(t, body, "etl/nightly"); !strings.Contains(c, ">triggered</span>") || !strings.Contains(c, "st-ready") {
		t.Errorf("etl/nightly's card does not show its triggered task:\n%s", c)
	}

	// Back to the schedule's card, with the flash.
	resp, err := noRedirect.PostForm(srv.URL+"/schedules/act", url.Values{"csrf": {csrf}, "name": {"etl/nightly"}, "action": {"resume"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/schedules?done=") || !strings.HasSuffix(loc, "#s-etl%2Fnightly") {
		t.Errorf("an action answers %d to %q, want a redirect to the schedule's card", resp.StatusCode, loc)
	}

	log, err := st.AuditLog(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range log {
		got = append(got, e.Who+"|"+e.Action+"|"+e.Target+"|"+e.Detail)
	}
	want := []string{"local|trigger|schedule etl/nightly|task " + itoa(idsOf(t, st, "report")[0]), "local|resume|schedule heartbeat|", "local|pause|schedule heartbeat|the API is down <for now>"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit log:\n%s\nwant (no entry for what changed nothing):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	for _, c := range []struct {
		form url.Values
		code int
		want string
	}{
		{url.Values{"name": {"nope"}, "action": {"pause"}}, http.StatusNotFound, `schedule "nope" not found`},
		{url.Values{"name": {"nope"}, "action": {"trigger"}}, http.StatusNotFound, `schedule "nope" not found`},
		{url.Values{"name": {"heartbeat"}, "action": {"delete"}}, http.StatusBadRequest, `action "delete": want pause, resume or trigger`},
		{url.Values{"action": {"pause"}}, http.StatusBadRequest, "no schedule named"},
	} {
		c.form.Set("csrf", csrf)
		if code, body := post(t, srv.Client(), srv.URL+"/schedules/act", c.form); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("POST %v: %d, want %d saying %q\n%s", c.form, code, c.code, c.want, body)
		}
	}
}

// TestScheduleActionsRefused: without the CSRF token, or from a read-only
// token, an action is refused and changes nothing; a store without
// schedules says so.
func TestScheduleActionsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := schedStore(t)
	srv := newDashboard(t, st)
	if code, body := post(t, srv.Client(), srv.URL+"/schedules/act", url.Values{"name": {"heartbeat"}, "action": {"pause"}}); code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Errorf("a pause without its CSRF token: %d %q", code, body)
	}

	const op, ro = "operator-token-0123456789", "reader-token-0123456789"
	tsrv := newDashboard(t, st, server.Token{Value: op, Role: server.RoleOperator}, server.Token{Value: ro, Role: server.RoleReadOnly})
	bearer := func(tok, method, path string, form url.Values) (int, string) {
		req, _ := http.NewRequest(method, tsrv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, a := range []string{"pause", "trigger"} {
		if code, body := bearer(ro, "POST", "/schedules/act", url.Values{"name": {"heartbeat"}, "action": {a}}); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
			t.Errorf("a read-only token's %s: %d %q", a, code, body)
		}
	}
	if code, page := bearer(ro, "GET", "/schedules", nil); code != http.StatusOK || strings.Contains(page, `action="/schedules/act"`) || !strings.Contains(page, `id="s-heartbeat"`) {
		t.Errorf("a read-only visitor's schedules page: %d, want the schedules without their buttons\n%s", code, page)
	}
	if log, err := st.AuditLog(ctx, 0, 0); err != nil || len(log) != 0 {
		t.Errorf("audit log %+v (%v), want nothing: every action was refused", log, err)
	}
	if ping := idsOf(t, st, "ping"); len(ping) != 3 {
		t.Errorf("heartbeat has %d tasks after refused triggers, want 3", len(ping))
	}

	// A store without schedules: the page says so.
	plain := openStore(t)
	if _, err := plain.Enqueue(ctx, []task.NewTask{{Kind: "k"}}); err != nil {
		t.Fatal(err)
	}
	bare := newDashboard(t, noSchedules{plain})
	if code, page := get(t, bare.Client(), bare.URL+"/schedules"); code != http.StatusOK || !strings.Contains(page, "Schedules are not available on this store") {
		t.Errorf("the schedules page on a store without them: %d\n%s", code, page)
	}
	_, page := get(t, bare.Client(), bare.URL+"/tasks/1")
	if code, body := post(t, bare.Client(), bare.URL+"/schedules/act", url.Values{"csrf": {csrfIn(t, page)}, "name": {"x"}, "action": {"pause"}}); code != http.StatusBadRequest || !strings.Contains(body, "not available on this store") {
		t.Errorf("an action on a store without schedules: %d\n%s", code, body)
	}
}

// noSchedules is a store without its optional capabilities.
type noSchedules struct{ store.Store }
