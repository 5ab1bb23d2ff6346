package dash_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/grit-run/grit/internal/dash"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// TestPagesReadTheReadStore: with a ReadStore (a hot standby of the
// store's PostgreSQL, here kept from receiving the primary's WAL), the
// pages show what the standby has, not what the primary has since, and
// say how far behind the store it is; an action goes to the store.
func TestPagesReadTheReadStore(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts PostgreSQL clusters of its own; runs without -short")
	}
	primary := pgtest.NewCluster(t)
	standby := primary.Standby(t, false)
	ctx := context.Background()
	st, err := postgres.Open(ctx, primary.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seen, err := st.Enqueue(ctx, []task.NewTask{{Kind: "seen-on-the-standby"}})
	if err != nil {
		t.Fatal(err)
	}
	standby.CatchUp(t, primary)
	read, err := postgres.OpenConfig(ctx, postgres.Config{DSN: standby.DSN(), Existing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer read.Close()
	standby.HoldWAL(t)
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "only-on-the-primary"}}); err != nil {
		t.Fatal(err)
	}

	d, err := dash.New(dash.Config{Store: st, ReadStore: read})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(func() { d.Close(); srv.Close() })
	code, page := get(t, srv.Client(), srv.URL+"/tasks")
	if code != http.StatusOK || !strings.Contains(page, "seen-on-the-standby") || strings.Contains(page, "only-on-the-primary") {
		t.Errorf("/tasks: %d; want the standby's task alone:\n%s", code, page)
	}
	if !strings.Contains(page, "These pages read a read store, a replica, ") || !strings.Contains(page, "behind the store") {
		t.Errorf("/tasks does not say how far behind the store its read store is:\n%s", page)
	}
	id := itoa(seen[0].ID)
	_, page = get(t, srv.Client(), srv.URL+"/tasks/"+id)
	if code, body := post(t, srv.Client(), srv.URL+"/tasks/"+id+"/act", url.Values{"action": {"cancel"}, "csrf": {csrfIn(t, page)}}); code != http.StatusOK || !strings.Contains(body, "now CANCELLED") {
		t.Errorf("cancel through the dashboard: %d\n%s", code, body)
	}
	if tk, err := st.GetTask(ctx, seen[0].ID); err != nil || tk.State != task.Cancelled {
		t.Errorf("the store's task %s after the cancel: %s (%v), want CANCELLED", id, tk.State, err)
	}
}
