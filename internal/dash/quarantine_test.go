package dash_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// setAside has a task of kind set items aside, each an item's JSON and
// its error, as a handler whose policy names replayKind would, and
// succeed; it answers the items' fingerprints, by error.
func setAside(t *testing.T, st store.Store, kind, replayKind string, items ...string) map[string]string {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: kind}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{kind}, Limit: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: %v %v", got, err)
	}
	c := got[0]
	fps := map[string]string{}
	var qs []task.Quarantined
	for i := 0; i+1 < len(items); i += 2 {
		fp := retry.Fingerprint(errors.New(items[i+1]))
		fps[items[i+1]] = fp
		qs = append(qs, task.Quarantined{ReplayKind: replayKind, Item: []byte(items[i]), Error: items[i+1], Fingerprint: fp})
	}
	if _, err := st.Quarantine(ctx, c.ID, c.LeaseToken, qs); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Finish(ctx, []store.Finish{{TaskID: c.ID, Token: c.LeaseToken, State: task.Success, Attempt: task.Attempt{Outcome: task.OutcomeSuccess}}}); err != nil {
		t.Fatal(err)
	}
	return fps
}

// raw is GET u's body as the server wrote it, escapes and all.
func raw(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", u, resp.StatusCode, b)
	}
	return string(b)
}

// quarantineSection is the part of the dead letters page about
// quarantined items.
func quarantineSection(t *testing.T, page string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `id="quarantined"`)
	if !ok {
		t.Fatalf("no quarantined section on the page:\n%s", page)
	}
	s, _, _ := strings.Cut(rest, "</section>")
	return s
}

// TestQuarantinedBesideTheDeadLetters: the dead letters page groups the
// quarantined items by fingerprint, with their count, kinds and sample
// error, and shows a few items of each, their JSON escaped and cut short;
// a group opened shows a page of its items, and the next; an item whose
// handler named no kind offers no replay.
func TestQuarantinedBesideTheDeadLetters(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	var rows []string
	for i := range 55 {
		rows = append(rows, fmt.Sprintf(`{"row":%d}`, i), fmt.Sprintf("row %d: bad date", i))
	}
	dates := setAside(t, st, "import", "import.row", rows...)["row 0: bad date"]
	long := `{"note":"<script>alert(1)</script>","pad":"` + strings.Repeat("x", 400) + `"}`
	accts := setAside(t, st, "export", "", long, "no account")["no account"]
	srv := newDashboard(t, st)

	page := raw(t, srv.Client(), srv.URL+"/dead-letters")
	q := quarantineSection(t, page)
	if !strings.Contains(page, "No dead letters") {
		t.Errorf("the dead letters section is gone:\n%s", page)
	}
	for _, want := range []string{
		`id="q-` + dates + `"`, `<b class="count">55</b> items`, "set aside by import", "row 54: bad date",
		`id="q-` + accts + `"`, `<b class="count">1</b> item`, "set aside by export",
		`&lt;script&gt;alert(1)&lt;/script&gt;`, "All 55 items →",
	} {
		if !strings.Contains(q, want) {
			t.Errorf("the section does not say %q:\n%s", want, q)
		}
	}
	if strings.Contains(q, "<script>") || strings.Contains(q, strings.Repeat("x", 200)) {
		t.Errorf("an item is shown unescaped or whole:\n%s", q)
	}
	if n := strings.Count(q, `name="id"`); n != 3+1 {
		t.Errorf("%d items offer actions, want 3 of the first group and its 1", n)
	}
	if n := strings.Count(q, `title="run it as a task of import.row">Replay</button>`); n != 3 {
		t.Errorf("%d items offer a replay, want the 3 whose handler names a kind", n)
	}
	if _, acct, _ := strings.Cut(q, `id="q-`+accts+`"`); strings.Contains(acct, "Replay all") || !strings.Contains(acct, "Drop all") {
		t.Errorf("a group none of whose items can be replayed offers a replay:\n%s", acct)
	}

	opened := quarantineSection(t, raw(t, srv.Client(), srv.URL+"/dead-letters?fingerprint="+dates))
	next := regexp.MustCompile(`href="(/dead-letters\?fingerprint=` + dates + `&after=\d+)#q-`).FindStringSubmatch(opened)
	if n := strings.Count(opened, `{&#34;row&#34;:`); n != 50 || next == nil {
		t.Fatalf("the opened group shows %d rows, want a page of 50 and a link to the next:\n%s", n, opened)
	}
	rest := quarantineSection(t, raw(t, srv.Client(), srv.URL+next[1]))
	if n := strings.Count(rest, `{&#34;row&#34;:`); n != 5 || !strings.Contains(rest, `row&#34;:54}`) || strings.Contains(rest, "Next items") {
		t.Errorf("the next page shows %d rows, want the last 5:\n%s", n, rest)
	}
	if code, body := get(t, srv.Client(), srv.URL+"/dead-letters?after=x"); code != http.StatusBadRequest || !strings.Contains(body, `after "x"`) {
		t.Errorf("a bad after: %d", code)
	}
}

// TestQuarantineActions: an operator replays a group, and drops one
// item, from the page, with its CSRF token: each says what it did and is
// audited; an item gone, an item that cannot be replayed, a form naming
// both or neither are refused, saying why; a read-only visitor has no
// buttons and is refused.
func TestQuarantineActions(t *testing.T) {
	t.Parallel()
	const op, ro = "operator-token-0123456789", "reader-token-0123456789"
	st := openStore(t)
	ctx := context.Background()
	dates := setAside(t, st, "import", "import.row", `{"row":1}`, "row 1: bad date", `{"row":2}`, "row 2: bad date")["row 1: bad date"]
	setAside(t, st, "export", "", `"a"`, "no account")
	srv := newDashboard(t, st, server.Token{Value: op, Role: server.RoleOperator}, server.Token{Value: ro, Role: server.RoleReadOnly})
	c := loggedIn(t, srv.URL, op)
	csrf := csrfIn(t, raw(t, c, srv.URL+"/dead-letters"))
	act := func(form url.Values) (int, string) {
		form.Set("csrf", csrf)
		return post(t, c, srv.URL+"/dead-letters/quarantined", form)
	}

	code, body := act(url.Values{"action": {"replay"}, "fingerprint": {dates}})
	if code != http.StatusOK || !regexp.MustCompile(`quarantined items with fingerprint `+dates+`: 2 replayed as task \d+, \d+`).MatchString(body) {
		t.Fatalf("replay a group: %d\n%s", code, body)
	}
	replayed, err := st.ListTasks(ctx, task.Filter{Kind: "import.row"})
	if err != nil || len(replayed) != 2 || string(replayed[0].Args) != `{"row":1}` || replayed[0].State != task.Ready {
		t.Errorf("the replayed tasks %+v (%v)", replayed, err)
	}
	left, err := st.ListQuarantined(ctx, task.QuarantineFilter{})
	if err != nil || len(left) != 1 {
		t.Fatalf("left %+v (%v), want the export's item", left, err)
	}
	id := fmt.Sprint(left[0].ID)
	if code, body := act(url.Values{"action": {"replay"}, "id": {id}}); code != http.StatusBadRequest || !strings.Contains(body, "names no kind to replay it as") {
		t.Errorf("replay an item without a kind: %d\n%s", code, body)
	}
	if code, body := act(url.Values{"action": {"drop"}, "id": {id}}); code != http.StatusOK || !strings.Contains(body, "quarantined item "+id+": 1 dropped") {
		t.Errorf("drop one: %d\n%s", code, body)
	}
	for name, c := range map[string]struct {
		form url.Values
		says string
	}{
		"gone":    {url.Values{"action": {"drop"}, "id": {id}}, "was replayed or dropped already"},
		"both":    {url.Values{"action": {"drop"}, "id": {id}, "fingerprint": {dates}}, "not both"},
		"neither": {url.Values{"action": {"drop"}}, "name the items"},
		"bad id":  {url.Values{"action": {"drop"}, "id": {"x"}}, `id "x"`},
		"action":  {url.Values{"action": {"skip"}, "id": {id}}, "want replay or drop"},
	} {
		if code, body := act(c.form); code != http.StatusBadRequest || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d, want 400 saying %q\n%s", name, code, c.says, body)
		}
	}
	log, err := st.AuditLog(ctx, 0, 0)
	if err != nil || len(log) != 3 || log[2].Action != "replay" || log[2].Count != 2 || log[2].Target != "quarantined items with fingerprint "+dates ||
		log[0].Action != "drop" || log[0].Target != "quarantined item "+id || log[0].Count != 1 || !strings.HasPrefix(log[0].Who, "token ") ||
		log[1].Count != 0 || !strings.Contains(log[1].Detail, "refused 1") {
		t.Errorf("audit log %+v (%v), want the group's replay, the refused one and the drop", log, err)
	}

	setAside(t, st, "import", "import.row", `{"row":3}`, "row 3: bad date")
	reader := loggedIn(t, srv.URL, ro)
	if q := quarantineSection(t, raw(t, reader, srv.URL+"/dead-letters")); strings.Contains(q, "<button") || !strings.Contains(q, "row 3: bad date") {
		t.Errorf("a read-only visitor's section:\n%s", q)
	}
	if code, _ := post(t, reader, srv.URL+"/dead-letters/quarantined", url.Values{"action": {"drop"}, "fingerprint": {dates}, "csrf": {csrfIn(t, raw(t, reader, srv.URL+"/"))}}); code != http.StatusForbidden {
		t.Errorf("a read-only drop: %d, want 403", code)
	}
	if code, _ := post(t, c, srv.URL+"/dead-letters/quarantined", url.Values{"action": {"drop"}, "fingerprint": {dates}}); code != http.StatusForbidden {
		t.Errorf("a drop without its CSRF token: %d, want 403", code)
	}
	if left, _ := st.ListQuarantined(ctx, task.QuarantineFilter{}); len(left) != 1 {
		t.Errorf("%d items left, want the one the refused drops did not touch", len(left))
	}
}
