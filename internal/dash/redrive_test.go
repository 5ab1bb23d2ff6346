package dash_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/task"
)

// TestRedriveButton: a failed run's page has a redrive button for an
// operator, none for a read-only visitor; the button sends back what did
// not succeed, says so on the run's page and in the audit log; a run
// still running is refused, saying why; a failed run task's page, and a
// bulk retry of a run's tasks, point to it.
func TestRedriveButton(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	run, err := st.SubmitRun(ctx, task.NewRun{Name: "nightly", Tasks: []task.NewTask{
		{Name: "extract", Kind: "extract"}, {Name: "load", Kind: "load", Needs: []string{"extract"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	endAll(t, st, "extract", task.Failed)
	srv := newDashboard(t, st, server.Token{Value: opToken, Role: server.RoleOperator}, server.Token{Value: readToken, Role: server.RoleReadOnly})
	op, reader := loggedIn(t, srv.URL, opToken), loggedIn(t, srv.URL, readToken)
	runPage := srv.URL + "/runs/" + itoa(run.ID)

	if _, page := get(t, reader, runPage); strings.Contains(page, `action="/runs/1/redrive"`) {
		t.Errorf("a read-only visitor sees the redrive button")
	}
	code, page := get(t, op, runPage)
	if code != http.StatusOK || !strings.Contains(page, `action="/runs/1/redrive"`) {
		t.Fatalf("the failed run's page has no redrive button for an operator: %d\n%s", code, page)
	}
	if _, taskPage := get(t, op, srv.URL+"/tasks/1"); !strings.Contains(taskPage, `<a href="/runs/1#redrive">redrive run 1</a>`) {
		t.Errorf("a failed run task's page does not point to the run's redrive")
	}
	csrf := csrfIn(t, page)
	if code, body := post(t, op, srv.URL+"/tasks/act", url.Values{"action": {"retry"}, "filter": {"run=1&state=FAILED"}, "confirm": {"all"}, "csrf": {csrf}}); code != http.StatusBadRequest || !strings.Contains(body, "redrive run 1 on its page") {
		t.Errorf("a bulk retry of a run's tasks: %d, want a pointer to the redrive\n%s", code, body)
	}
	if code, body := post(t, reader, runPage+"/redrive", url.Values{"csrf": {csrfOf(t, reader, srv.URL)}}); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Errorf("a read-only redrive: %d %q", code, body)
	}
	if code, body := post(t, op, runPage+"/redrive", nil); code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Errorf("a redrive without its CSRF token: %d %q", code, body)
	}
	if got, _ := st.GetRun(ctx, run.ID); got.State != task.Failed {
		t.Fatalf("run %s after the refused posts, want FAILED", got.State)
	}

	code, body := post(t, op, runPage+"/redrive", url.Values{"csrf": {csrf}})
	if code != http.StatusOK || !strings.Contains(body, "run 1 redriven: now RUNNING; sent back to wait: tasks 1, 2") {
		t.Fatalf("the redrive: %d\n%s", code, body)
	}
	if strings.Contains(body, `action="/runs/1/redrive"`) {
		t.Errorf("the running run's page still has the redrive button")
	}
	if got, _ := st.GetTask(ctx, 1); got.State != task.Ready || got.Attempt != 0 {
		t.Errorf("extract after the redrive: %s at attempt %d, want READY at 0", got.State, got.Attempt)
	}
	log, err := st.AuditLog(ctx, 0, 0)
	if err != nil || len(log) != 1 || log[0].Action != "redrive" || log[0].Target != "run 1" || log[0].Count != 2 || !strings.HasPrefix(log[0].Who, "token ") {
		t.Errorf("the audit log: %+v, %v; want the redrive of run 1's 2 tasks by the operator's token", log, err)
	}
	code, body = post(t, op, runPage+"/redrive", url.Values{"csrf": {csrf}})
	if code != http.StatusBadRequest || !strings.Contains(body, "redrive run 1: it is RUNNING: only a run that has ended can be redriven") {
		t.Errorf("a redrive of a running run: %d\n%s", code, body)
	}
	if code, body := post(t, op, srv.URL+"/runs/9/redrive", url.Values{"csrf": {csrf}}); code != http.StatusNotFound || !strings.Contains(body, "run 9 not found") {
		t.Errorf("a redrive of a missing run: %d\n%s", code, body)
	}
}
