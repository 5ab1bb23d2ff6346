package dash_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/internal/machine"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// The machines of the tests: order's states have no handler but shipped,
// whose task nobody runs; refund's refunding runs a task the tests end.
var (
	orderMachine = fsm.Machine{Name: "order", Initial: "new",
		States: []fsm.State{{Name: "new"}, {Name: "paid"}, {Name: "shipped", Kind: "ship"}, {Name: "cancelled"}},
		Transitions: []fsm.Transition{{From: "new", Event: "pay", To: "paid"}, {From: "paid", Event: "ship", To: "shipped"},
			{From: "new", Event: "cancel", To: "cancelled"}}}
	refundMachine = fsm.Machine{Name: "refund", Initial: "asked",
		States:      []fsm.State{{Name: "asked"}, {Name: "refunding", Kind: "refund"}},
		Transitions: []fsm.Transition{{From: "asked", Event: "start", To: "refunding"}}}
	// orderKey has a slash and a colon: its page's address escapes it.
	orderKey = "eu/2024:17"
)

func send(t *testing.T, st *sqlite.Store, m fsm.Machine, key string, events ...string) fsm.Instance {
	t.Helper()
	var in fsm.Instance
	for _, ev := range events {
		var err error
		if in, err = machine.Send(context.Background(), st, &m, m.Name, key, ev, nil, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// machineStore is a SQLite store with instances: 55 of machine bulk
// (k001…k055, in new); order eu/2024:17, paid then ignored "cancel",
// then entering shipped; order plain, new; refund r-failed, whose
// refunding task failed; refund r-held, whose task is a dead letter.
func machineStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st := openStore(t)
	bulk := fsm.Machine{Name: "bulk", Initial: "new", States: []fsm.State{{Name: "new"}, {Name: "done"}},
		Transitions: []fsm.Transition{{From: "new", Event: "finish", To: "done"}}}
	for i := 1; i <= 55; i++ {
		send(t, st, bulk, fmt.Sprintf("k%03d", i), "poke")
	}
	send(t, st, orderMachine, orderKey, "pay", "cancel", "ship")
	send(t, st, orderMachine, "plain", "nothing")
	for _, c := range []struct {
		key string
		end task.State
	}{{"r-failed", task.Failed}, {"r-held", task.DeadLetter}} {
		send(t, st, refundMachine, c.key, "start")
		endAll(t, st, "refund", c.end)
		if _, err := machine.Advance(context.Background(), st, refundMachine, c.key, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// row is the machines page's table row of key.
func row(t *testing.T, page, key string) string {
	t.Helper()
	i := strings.Index(page, "<code>"+key+"</code>")
	if i < 0 {
		t.Fatalf("no row for key %s on the page:\n%s", key, page)
	}
	start := strings.LastIndex(page[:i], "<tr>")
	end := strings.Index(page[i:], "</tr>")
	return page[start : i+end]
}

// TestMachinesPage: the instances by machine then key, a page of 50 with
// a next page within the last machine shown; the filter by machine; each
// row's state, badge, events waiting and link.
func TestMachinesPage(t *testing.T) {
	t.Parallel()
	st := machineStore(t)
	srv := newDashboard(t, st)
	code, page := get(t, srv.Client(), srv.URL+"/machines")
	if code != http.StatusOK {
		t.Fatalf("GET /machines: %d\n%s", code, page)
	}
	if !strings.Contains(page, `href="/machines" class="on"`) {
		t.Errorf("the page is not the nav's Machines")
	}
	if n := strings.Count(page, `<a href="/machines/bulk/k`); n != 50 {
		t.Errorf("the first page shows %d instances of bulk, want 50 (a page)", n)
	}
	if !strings.Contains(page, "<code>k001</code>") || !strings.Contains(page, "<code>k050</code>") || strings.Contains(page, "k051") || strings.Contains(page, "/machines/order/") {
		t.Errorf("the first page is not bulk's k001…k050")
	}
	if !strings.Contains(page, `href="/machines?after=k050&machine=bulk"`) || !strings.Contains(page, "Next page of bulk") {
		t.Errorf("the first page has no next page within bulk:\n%s", page)
	}

	_, page = get(t, srv.Client(), srv.URL+"/machines?machine=bulk&after=k050")
	if n := strings.Count(page, `<a href="/machines/bulk/k`); n != 5 || !strings.Contains(page, "<code>k051</code>") || !strings.Contains(page, "<code>k055</code>") {
		t.Errorf("the next page shows %d instances, want bulk's k051…k055:\n%s", n, page)
	}
	if strings.Contains(page, "Next page") || !strings.Contains(page, "First page") {
		t.Errorf("the last page has a next page, or no way back to the first")
	}

	_, page = get(t, srv.Client(), srv.URL+"/machines?machine=order")
	if strings.Contains(page, "/machines/bulk/") || strings.Contains(page, "/machines/refund/") {
		t.Errorf("the filter on order shows other machines' instances:\n%s", page)
	}
	r := row(t, page, orderKey)
	for _, want := range []string{`href="/machines/order/eu%2F2024:17"`, "<b>paid</b>", "entering shipped (task ", `<span class="dim">0</span>`} {
		if !strings.Contains(r, want) {
			t.Errorf("the row of %s does not say %q:\n%s", orderKey, want, r)
		}
	}
	if r := row(t, page, "plain"); !strings.Contains(r, "<b>new</b>") || strings.Contains(r, "badge") {
		t.Errorf("the row of plain:\n%s", r)
	}

	_, page = get(t, srv.Client(), srv.URL+"/machines?machine=refund")
	held := idsOf(t, st, "refund")[1]
	if r := row(t, page, "r-held"); !strings.Contains(r, `<a href="/tasks/`+itoa(held)+`" class="badge st-dead_letter"`) || !strings.Contains(r, "held: its state's task is a dead letter") {
		t.Errorf("the row of r-held has no held badge linking to task %d:\n%s", held, r)
	}
	if r := row(t, page, "r-failed"); !strings.Contains(r, "<b>failed</b>") || strings.Contains(r, "held") {
		t.Errorf("the row of r-failed:\n%s", r)
	}
	_, page = get(t, srv.Client(), srv.URL+"/machines?machine=nope")
	if !strings.Contains(page, "No instance of machine nope") {
		t.Errorf("a filter on no machine does not say so:\n%s", page)
	}
}

// TestInstancePage: an instance's state, the transition under way with
// its task's state now, the events waiting and the history newest first,
// at the address of its escaped key, or of its key as it is.
func TestInstancePage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := machineStore(t)
	// An event no worker has delivered yet: sent without the machine.
	if _, err := machine.Send(ctx, st, nil, "order", orderKey, "cancel", json.RawMessage(`{"why":"late <again>"}`), time.Now()); err != nil {
		t.Fatal(err)
	}
	srv := newDashboard(t, st)
	ship := idsOf(t, st, "ship")[0]
	for _, addr := range []string{"/machines/order/eu%2F2024:17", "/machines/order/eu/2024:17"} {
		code, page := get(t, srv.Client(), srv.URL+addr)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", addr, code, page)
		}
		if !strings.Contains(page, `href="/machines" class="on"`) || !strings.Contains(page, "<code>"+orderKey+"</code>") {
			t.Errorf("GET %s is not the page of %s", addr, orderKey)
		}
		for _, want := range []string{`<b class="mstate">paid</b>`, "<b>shipped</b> from paid on event <code>ship</code> <span class=\"dim\">(seq 3)</span>",
			`<a href="/tasks/` + itoa(ship) + `">task ` + itoa(ship) + `</a> <span class="badge st-ready">READY</span>`,
			"Events waiting <span class=\"dim\">· 1,", `<code>{"why":"late <again>"}</code>`} {
			if !strings.Contains(page, want) {
				t.Errorf("GET %s does not say %q:\n%s", addr, want, page)
			}
		}
		_, hist, _ := strings.Cut(page, "History")
		ignored, paid := strings.Index(hist, `oc-IGNORED">IGNORED`), strings.Index(hist, `oc-ENTERED">ENTERED`)
		if ignored < 0 || paid < 0 || ignored > paid || !strings.Contains(hist, `no transition from "paid" on "cancel"`) {
			t.Errorf("the history is not the ignored cancel, then the entered pay:\n%s", hist)
		}
	}

	_, page := get(t, srv.Client(), srv.URL+"/machines/refund/r-held")
	held := idsOf(t, st, "refund")[1]
	for _, want := range []string{`held: its state's task is a dead letter`, `st-dead_letter">DEAD_LETTER`, "replay, skip or fail task " + itoa(held)} {
		if !strings.Contains(page, want) {
			t.Errorf("the page of r-held does not say %q:\n%s", want, page)
		}
	}
	_, page = get(t, srv.Client(), srv.URL+"/machines/refund/r-failed")
	if !strings.Contains(page, `oc-FAILED">FAILED`) || !strings.Contains(page, `the handler of "refunding" ended FAILED`) || !strings.Contains(page, "asked → failed") {
		t.Errorf("the page of r-failed does not show its failed entry:\n%s", page)
	}
	// A key with what a path or a query would read: its row's link is its
	// page.
	send(t, st, orderMachine, "a/../b?c#d 50%", "pay")
	_, page = get(t, srv.Client(), srv.URL+"/machines?machine=order")
	if !strings.Contains(page, `<a href="/machines/order/a%2F..%2Fb%3Fc%23d%2050%25">`) {
		t.Errorf("the row of key a/../b?c#d 50%% does not link to its escaped page:\n%s", page)
	}
	if code, page := get(t, srv.Client(), srv.URL+"/machines/order/a%2F..%2Fb%3Fc%23d%2050%25"); code != http.StatusOK || !strings.Contains(page, "<code>a/../b?c#d 50%</code>") {
		t.Errorf("the page of key a/../b?c#d 50%%: %d\n%s", code, page)
	}
	if code, page := get(t, srv.Client(), srv.URL+"/machines/order/nope"); code != http.StatusNotFound || !strings.Contains(page, `instance "nope" of machine "order" not found`) {
		t.Errorf("an instance not in the store: %d\n%s", code, page)
	}
}

// TestSendEvent: the instance page's form queues an event, with its JSON
// payload, and writes the audit log; a payload that is not JSON is a 400
// that says so.
func TestSendEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := machineStore(t)
	srv := newDashboard(t, st)
	addr := "/machines/order/eu%2F2024:17"
	_, page := get(t, srv.Client(), srv.URL+addr)
	if !strings.Contains(page, `<form method="post" action="`+addr+`"`) {
		t.Fatalf("the instance page has no form to send an event:\n%s", page)
	}
	csrf := csrfIn(t, page)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(srv.URL+addr, url.Values{"csrf": {csrf}, "event": {"refund"}, "payload": {` {"amount": 42} `}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, addr+"?done=") {
		t.Fatalf("a send answers %d to %q, want a redirect to the instance's page", resp.StatusCode, loc)
	}
	_, page = get(t, srv.Client(), srv.URL+loc)
	if !strings.Contains(page, "event refund sent to order/eu/2024:17 (seq 4): a worker that has machine order delivers it within a second") {
		t.Errorf("the flash after a send:\n%s", page)
	}
	if !strings.Contains(page, `<td>4</td><td><code>refund</code></td><td><code>{"amount":42}</code>`) {
		t.Errorf("the sent event is not waiting on the page:\n%s", page)
	}
	in, _, err := machine.Get(ctx, st, "order", orderKey)
	if err != nil || len(in.Queue) != 1 || in.Queue[0].Event != "refund" || string(in.Queue[0].Payload) != `{"amount":42}` {
		t.Errorf("the instance's queue: %+v (%v)", in.Queue, err)
	}

	for _, c := range []struct {
		addr string
		form url.Values
		code int
		want string
	}{
		{addr, url.Values{"event": {"x"}, "payload": {"{amount: 42}"}}, http.StatusBadRequest, "the payload is not JSON (invalid character 'a'"},
		{addr, url.Values{"event": {" "}}, http.StatusBadRequest, "no event named"},
		{"/machines/order/nope", url.Values{"event": {"pay"}}, http.StatusNotFound, `instance "nope" of machine "order" not found`},
	} {
		c.form.Set("csrf", csrf)
		if code, body := post(t, srv.Client(), srv.URL+c.addr, c.form); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("POST %s %v: %d, want %d saying %q\n%s", c.addr, c.form, code, c.code, c.want, body)
		}
	}
	if _, err := st.GetInstance(ctx, "order", "nope"); err == nil {
		t.Errorf("a send to an instance not in the store made it")
	}
	log, err := st.AuditLog(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || log[0].Who != "local" || log[0].Action != "send" || log[0].Target != "instance order/"+orderKey ||
		log[0].Detail != `event refund (seq 4) with payload {"amount": 42}` {
		t.Errorf("audit log %+v, want the one send", log)
	}
}

// TestSendEventRefused: without the CSRF token, or from a read-only
// token, a send is refused and changes nothing; a read-only visitor sees
// no form; a store without machines says so.
func TestSendEventRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := machineStore(t)
	srv := newDashboard(t, st)
	addr := "/machines/order/eu%2F2024:17"
	if code, body := post(t, srv.Client(), srv.URL+addr, url.Values{"event": {"pay"}}); code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Errorf("a send without its CSRF token: %d %q", code, body)
	}
	const op, ro = "operator-token-0123456789", "reader-token-0123456789"
	tsrv := newDashboard(t, st, server.Token{Value: op, Role: server.RoleOperator}, server.Token{Value: ro, Role: server.RoleReadOnly})
	bearer := func(method, path string, form url.Values) (int, string) {
		req, _ := http.NewRequest(method, tsrv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Authorization", "Bearer "+ro)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := bearer("POST", addr, url.Values{"event": {"pay"}}); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Errorf("a read-only token's send: %d %q", code, body)
	}
	if code, page := bearer("GET", addr, nil); code != http.StatusOK || strings.Contains(page, "<form method=\"post\" action=\"/machines") || !strings.Contains(page, "History") {
		t.Errorf("a read-only visitor's instance page: %d, want the instance without the form\n%s", code, page)
	}
	if log, err := st.AuditLog(ctx, 0, 0); err != nil || len(log) != 0 {
		t.Errorf("audit log %+v (%v), want nothing: every send was refused", log, err)
	}
	if in, _, err := machine.Get(ctx, st, "order", orderKey); err != nil || len(in.Queue) != 0 {
		t.Errorf("after refused sends the instance's queue is %+v (%v)", in.Queue, err)
	}

	plain := openStore(t)
	if _, err := plain.Enqueue(ctx, []task.NewTask{{Kind: "k"}}); err != nil {
		t.Fatal(err)
	}
	bare := newDashboard(t, noSchedules{plain})
	for _, addr := range []string{"/machines", "/machines/order/x"} {
		if code, page := get(t, bare.Client(), bare.URL+addr); code != http.StatusOK || !strings.Contains(page, "State machines are not available on this store") {
			t.Errorf("GET %s on a store without machines: %d\n%s", addr, code, page)
		}
	}
	_, page := get(t, bare.Client(), bare.URL+"/tasks/1")
	if code, body := post(t, bare.Client(), bare.URL+"/machines/order/x", url.Values{"csrf": {csrfIn(t, page)}, "event": {"pay"}}); code != http.StatusBadRequest || !strings.Contains(body, "not available on this store") {
		t.Errorf("a send on a store without machines: %d\n%s", code, body)
	}
}
