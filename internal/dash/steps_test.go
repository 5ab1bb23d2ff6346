package dash_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestTaskPageShowsItsSteps: a task's page lists its recorded steps, by
// the attempt that ran each, its results escaped.
func TestTaskPageShowsItsSteps(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := context.Background()
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "pay"}}); err != nil {
		t.Fatal(err)
	}
	c, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 1})
	if err != nil || len(c) != 1 {
		t.Fatal(c, err)
	}
	for i, res := range []string{`{"id":"ch-1"}`, `"<script>x</script>"`} {
		if _, err := st.RecordStep(ctx, c[0].ID, c[0].LeaseToken, task.Step{Seq: i + 1, Name: "charge", Occurrence: i + 1, Attempt: 1, Result: json.RawMessage(res)}); err != nil {
			t.Fatal(err)
		}
	}
	srv := newDashboard(t, st)
	code, page := get(t, http.DefaultClient, srv.URL+"/tasks/"+itoa(c[0].ID))
	if code != 200 || !strings.Contains(page, `id="steps"`) || !strings.Contains(page, `{"id":"ch-1"}`) || !strings.Contains(page, "(2)") {
		t.Fatalf("task page: %d, steps not shown:\n%s", code, page)
	}
	// get unescapes the page: the raw one must not hold the script.
	resp, err := http.Get(srv.URL + "/tasks/" + itoa(c[0].ID))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "<script>x</script>") {
		t.Error("a step's result reached the page unescaped")
	}
}
