package dash_test

import (
	"context"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/dash"
	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newDashboard(t *testing.T, st store.Store, tokens ...server.Token) *httptest.Server {
	t.Helper()
	d, err := dash.New(dash.Config{Store: st, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(func() { d.Close(); srv.Close() })
	return srv
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Accept", "text/html")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, html.UnescapeString(string(b))
}

func post(t *testing.T, c *http.Client, u string, form url.Values) (int, string) {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, html.UnescapeString(string(b))
}

// TestPagesWithoutTokens: every page answers, on either store, on a
// store with a run and a task; a POST needs the page's CSRF token.
func TestPagesWithoutTokens(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) store.Store{
		"sqlite":   func(t *testing.T) store.Store { return openStore(t) },
		"postgres": func(t *testing.T) store.Store { return pgtest.Open(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testPages(t, open(t))
		})
	}
}

func testPages(t *testing.T, st store.Store) {
	ctx := context.Background()
	r, err := st.SubmitRun(ctx, task.NewRun{Name: "nightly"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "charge", Args: []byte(`{"order":"o-42","note":"<b>&</b>"}`)}}); err != nil {
		t.Fatal(err)
	}
	srv := newDashboard(t, st)
	for _, path := range []string{"/", "/runs", "/tasks", "/tasks?state=READY&q=o-42", "/tasks/1", "/dead-letters", "/groups", "/workers", "/audit", "/schedules", "/runs/" + itoa(r.ID)} {
		code, body := get(t, srv.Client(), srv.URL+path)
		if code != http.StatusOK || !strings.Contains(body, "</html>") {
			t.Errorf("GET %s: %d\n%s", path, code, body)
		}
	}
	if _, body := get(t, srv.Client(), srv.URL+"/tasks/1"); !strings.Contains(body, `"note": "<b>&</b>"`) {
		t.Errorf("the task's args are not shown as formatted, escaped JSON:\n%s", body)
	}
	for path, want := range map[string]string{
		"/tasks/99":          "task 99 not found",
		"/tasks/x":           "want a task id",
		"/tasks?state=DONE":  `state "DONE" is not a task state`,
		"/tasks?from=monday": `from "monday" is not a time`,
	} {
		code, body := get(t, srv.Client(), srv.URL+path)
		if code < 400 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, want an error saying %q\n%s", path, code, want, body)
		}
	}

	// A POST without the CSRF token is refused; with it, the task is
	// cancelled.
	code, body := post(t, srv.Client(), srv.URL+"/tasks/1/act", url.Values{"action": {"cancel"}})
	if code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Errorf("a POST without its CSRF token: %d %q", code, body)
	}
	_, page := get(t, srv.Client(), srv.URL+"/tasks/1")
	code, body = post(t, srv.Client(), srv.URL+"/tasks/1/act", url.Values{"action": {"cancel"}, "csrf": {csrfIn(t, page)}})
	if code != http.StatusOK || !strings.Contains(body, "task 1 cancelled: now CANCELLED") {
		t.Errorf("a cancel with its CSRF token: %d\n%s", code, body)
	}
	if got, _ := st.GetTask(ctx, 1); got.State != task.Cancelled {
		t.Errorf("task 1 is %s after the cancel", got.State)
	}
}

// TestTokensAndRoles: with tokens, a page sends the visitor to log in; a
// bearer token opens it; a read-only token cannot act.
func TestTokensAndRoles(t *testing.T) {
	t.Parallel()
	const op, ro = "operator-token-0123456789", "reader-token-0123456789"
	st := openStore(t)
	if _, err := st.Enqueue(context.Background(), []task.NewTask{{Kind: "k"}}); err != nil {
		t.Fatal(err)
	}
	srv := newDashboard(t, st, server.Token{Value: op, Role: server.RoleOperator}, server.Token{Value: ro, Role: server.RoleReadOnly})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	code, _ := get(t, noRedirect, srv.URL+"/tasks")
	if code != http.StatusSeeOther {
		t.Errorf("a page without a login: %d, want a redirect to the login page", code)
	}
	bearer := func(tok, method, path string, form url.Values) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := bearer(ro, "GET", "/tasks", nil); code != http.StatusOK {
		t.Errorf("GET with a read-only bearer token: %d", code)
	}
	if code, _ := bearer("wrong-token-0123456789", "GET", "/tasks", nil); code != http.StatusUnauthorized {
		t.Errorf("GET with a wrong bearer token: %d", code)
	}
	if code, body := bearer(ro, "POST", "/tasks/1/act", url.Values{"action": {"cancel"}}); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Errorf("a read-only token's POST: %d %q", code, body)
	}
	if code, body := bearer(op, "POST", "/tasks/1/act", url.Values{"action": {"cancel"}}); code != http.StatusSeeOther {
		t.Errorf("an operator token's POST: %d %q", code, body)
	}
	if got, _ := st.GetTask(context.Background(), 1); got.State != task.Cancelled {
		t.Errorf("task 1 is %s after the operator's cancel", got.State)
	}
	// A wrong login says so and sets no session.
	code, body := post(t, noRedirect, srv.URL+"/login", url.Values{"token": {"wrong-token-0123456789"}})
	if code != http.StatusUnauthorized || !strings.Contains(body, "not one this dashboard accepts") {
		t.Errorf("a wrong login: %d", code)
	}
}

// TestServeRefusesAnOpenAddressWithoutTokens: as the API does.
func TestServeRefusesAnOpenAddressWithoutTokens(t *testing.T) {
	t.Parallel()
	d, err := dash.New(dash.Config{Store: openStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skip("cannot listen on 0.0.0.0 here: ", err)
	}
	err = d.ServeListener(context.Background(), l)
	if err == nil || !strings.Contains(err.Error(), "GRIT_TOKENS") {
		t.Errorf("ServeListener on %s without tokens: %v, want a refusal saying how to set tokens", l.Addr(), err)
	}
}

func csrfIn(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", page)
	}
	return m[1]
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestBulkActionsTakeEveryMatchingTask: cancel and retry apply to every
// task the filter selects, more than a page of them, and say so in the
// audit log.
func TestBulkActionsTakeEveryMatchingTask(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := context.Background()
	var nts []task.NewTask
	for range 1200 { // more than a page of the store's (500) and of the dashboard's (50)
		nts = append(nts, task.NewTask{Kind: "sync", RunAt: time.Now().Add(time.Hour)})
	}
	nts = append(nts, task.NewTask{Kind: "other"})
	if _, err := st.Enqueue(ctx, nts); err != nil {
		t.Fatal(err)
	}
	srv := newDashboard(t, st)
	_, page := get(t, srv.Client(), srv.URL+"/tasks?state=READY&kind=sync")
	csrf := csrfIn(t, page)
	bulk := func(action, filter string) (int, string) {
		return post(t, srv.Client(), srv.URL+"/tasks/act", url.Values{"action": {action}, "filter": {filter}, "confirm": {"all"}, "csrf": {csrf}})
	}
	if code, body := post(t, srv.Client(), srv.URL+"/tasks/act", url.Values{"action": {"cancel"}, "filter": {"state=READY&kind=sync"}, "csrf": {csrf}}); code != http.StatusBadRequest || !strings.Contains(body, "tick the box") {
		t.Errorf("a bulk action without its confirmation: %d", code)
	}
	if code, body := bulk("cancel", "state=READY&kind=sync"); code != http.StatusOK || !strings.Contains(body, "1,200 tasks cancelled") {
		t.Fatalf("bulk cancel: %d\n%s", code, body)
	}
	if code, body := bulk("retry", "state=CANCELLED"); code != http.StatusOK || !strings.Contains(body, "1,200 tasks retried") {
		t.Fatalf("bulk retry: %d\n%s", code, body)
	}
	ready, err := st.ListTasks(ctx, task.Filter{States: []task.State{task.Ready}})
	if err != nil || len(ready) != 1201 {
		t.Fatalf("%d READY tasks after the retry (%v), want all 1201", len(ready), err)
	}
	log, err := st.AuditLog(ctx, 0, 0)
	if err != nil || len(log) != 2 || log[0].Action != "retry" || log[0].Count != 1200 || log[1].Action != "cancel" || log[1].Target != "kind=sync state=READY" {
		t.Errorf("audit log %+v (%v), want the cancel and the retry of 1200 tasks each", log, err)
	}
}

// TestCloseStopsARampedReplay: a ramped replay goes on after its request,
// but not after the dashboard: Close stops it and waits for it, and the
// audit log says where it stopped.
func TestCloseStopsARampedReplay(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := context.Background()
	var nts []task.NewTask
	for range 5 {
		nts = append(nts, task.NewTask{Kind: "refund"})
	}
	if _, err := st.Enqueue(ctx, nts); err != nil {
		t.Fatal(err)
	}
	endAll(t, st, "refund", task.DeadLetter)
	d, err := dash.New(dash.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	defer srv.Close()
	_, page := get(t, srv.Client(), srv.URL+"/dead-letters")
	code, body := post(t, srv.Client(), srv.URL+"/dead-letters/act", url.Values{"action": {"replay"}, "fingerprint": {""}, "rate": {"0.5"}, "csrf": {csrfIn(t, page)}})
	if code != http.StatusOK || !strings.Contains(body, "at 0.5 a second") {
		t.Fatalf("a ramped replay: %d\n%s", code, body)
	}
	closed := make(chan struct{})
	go func() { d.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second): // the ramp alone would take 8s
		t.Fatal("Close did not return while a ramp went on")
	}
	log, err := st.AuditLog(ctx, 0, 0)
	if err != nil || len(log) != 2 || !strings.Contains(log[0].Action, "ramp stopped: the dashboard closed") || log[0].Count >= 5 {
		t.Fatalf("audit log %+v (%v), want the ramp's start, then its stop with fewer than 5 replayed", log, err)
	}
	left, err := st.ListTasks(ctx, task.Filter{States: []task.State{task.DeadLetter}})
	if err != nil || len(left) != 5-log[0].Count {
		t.Errorf("%d dead letters left (%v) after %d replayed, want the rest", len(left), err, log[0].Count)
	}
}

// TestOverviewFlagsUnservedWork: the overview names the kind of work due
// for a minute that no live worker serves, and says nothing of a kind one
// serves.
func TestOverviewFlagsUnservedWork(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := t.Context()
	now, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RegisterWorker(ctx, task.Worker{ID: "w", Kinds: []string{"charge"}}); err != nil {
		t.Fatal(err)
	}
	long := now.Add(-2 * ops.UnservedAfter)
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "charge", RunAt: long}, {Kind: "thumbnail", RunAt: long}}); err != nil {
		t.Fatal(err)
	}
	srv := newDashboard(t, st)
	_, body := get(t, srv.Client(), srv.URL+"/")
	i := strings.Index(body, `id="unserved"`)
	if i < 0 {
		t.Fatalf("the overview does not flag unserved work:\n%s", body)
	}
	section := body[i : i+strings.Index(body[i:], "</section>")]
	if !strings.Contains(section, ">thumbnail</a>") || strings.Contains(section, "charge") {
		t.Errorf("the unserved section names\n%s\nwant thumbnail alone", section)
	}
}

// TestRunsShowProgressAndBlocked: /runs shows each run's progress, and a
// run whose rest waits for a dead letter as BLOCKED, there and on its
// page; a run under way is not.
func TestRunsShowProgressAndBlocked(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := t.Context()
	blocked, err := st.SubmitRun(ctx, task.NewRun{Name: "settle", Tasks: []task.NewTask{
		{Name: "charge", Kind: "k"}, {Name: "mail", Kind: "k", Needs: []string{"charge"}}, {Name: "other", Kind: "k"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range claimAll(t, st, 2) {
		f := store.Finish{TaskID: tk.ID, Token: tk.LeaseToken, State: task.Success}
		if tk.Name == "charge" {
			f = store.Finish{TaskID: tk.ID, Token: tk.LeaseToken, State: task.DeadLetter, Error: "declined", Fingerprint: "f"}
		}
		if errs, err := st.Finish(ctx, []store.Finish{f}); err != nil || errs[0] != nil {
			t.Fatal(err, errs)
		}
	}
	going, err := st.SubmitRun(ctx, task.NewRun{Name: "report", Tasks: []task.NewTask{{Name: "a", Kind: "k"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := newDashboard(t, st)
	_, page := get(t, srv.Client(), srv.URL+"/runs")
	row := func(id int64) string {
		i := strings.Index(page, `<a href="/runs/`+itoa(id)+`">`+itoa(id)+`</a>`)
		if i < 0 {
			t.Fatalf("no row for run %d:\n%s", id, page)
		}
		return page[i : i+strings.Index(page[i:], "</tr>")]
	}
	if r := row(blocked.ID); !strings.Contains(r, "BLOCKED") || !strings.Contains(r, "1/3") || !strings.Contains(r, `class="done" width="33"`) {
		t.Errorf("the blocked run's row says\n%s\nwant BLOCKED and 1/3 tasks ended", r)
	}
	if r := row(going.ID); strings.Contains(r, "BLOCKED") || !strings.Contains(r, "0/1") {
		t.Errorf("the run under way's row says\n%s\nwant no BLOCKED and 0/1", r)
	}
	_, p := get(t, srv.Client(), srv.URL+"/runs/"+itoa(blocked.ID))
	if !strings.Contains(p, `id="blocked"`) || !strings.Contains(p, "Blocked on a dead letter") {
		t.Errorf("the blocked run's page does not say it is blocked:\n%s", p)
	}
	// Its attempts on one timeline, a row a task that ran.
	i := strings.Index(p, `id="timeline"`)
	if i < 0 {
		t.Fatalf("the run's page has no timeline:\n%s", p)
	}
	tl := p[i : i+strings.Index(p[i:], "</section>")]
	if !strings.Contains(tl, ">charge (") || !strings.Contains(tl, "charge: attempt 1: ") || !strings.Contains(tl, `class="oc-success"`) {
		t.Errorf("the run's timeline does not show charge's and other's attempts:\n%s", tl)
	}
}

// claimAll claims n due tasks, or fails the test.
func claimAll(t *testing.T, st store.Store, n int) []task.Task {
	t.Helper()
	ts, err := st.Claim(t.Context(), store.ClaimRequest{Worker: "w", Limit: n, Lease: time.Minute})
	if err != nil || len(ts) != n {
		t.Fatalf("claimed %d (%v), want %d", len(ts), err, n)
	}
	return ts
}

// TestRecoveredTaskSaysSo: a task that succeeded after a failed attempt
// says it recovered, and shows the earlier error as earlier, not as a
// failure.
func TestRecoveredTaskSaysSo(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := t.Context()
	e, err := st.Enqueue(ctx, []task.NewTask{{Kind: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	now, _ := st.Now(ctx)
	first := claimAll(t, st, 1)[0]
	if errs, err := st.Finish(ctx, []store.Finish{{TaskID: first.ID, Token: first.LeaseToken, State: task.Retrying, NextAt: now, Error: "connection reset", Fingerprint: "f", Streak: 1,
		Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "connection reset", Fingerprint: "f"}}}); err != nil || errs[0] != nil {
		t.Fatal(err, errs)
	}
	second := claimAll(t, st, 1)[0]
	if errs, err := st.Finish(ctx, []store.Finish{{TaskID: second.ID, Token: second.LeaseToken, State: task.Success}}); err != nil || errs[0] != nil {
		t.Fatal(err, errs)
	}
	srv := newDashboard(t, st)
	_, page := get(t, srv.Client(), srv.URL+"/tasks/"+itoa(e[0].Task.ID))
	if !strings.Contains(page, `<dd id="recovered">succeeded on attempt 2, after 1 that did not</dd>`) {
		t.Errorf("the task page does not say the task recovered:\n%s", page)
	}
	if strings.Contains(page, `class="err">connection reset`) || !strings.Contains(page, `class="earlier">connection reset`) {
		t.Errorf("the earlier error is shown as a failure, or not at all:\n%s", page)
	}
}

// TestTemplatesHaveNoInlineStyle: the pages' Content-Security-Policy
// (style-src 'self') makes a browser ignore style attributes, so a page
// that sets one draws wrong: a progress bar full at 0%, as one did.
func TestTemplatesHaveNoInlineStyle(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("templates/*.html")
	if err != nil || len(files) == 0 {
		t.Fatalf("templates: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(string(b), "style=\""); i >= 0 {
			t.Errorf("%s: a style attribute (%q), which the CSP blocks: use a class, or an SVG attribute", f, string(b[i:min(len(b), i+40)]))
		}
	}
}
