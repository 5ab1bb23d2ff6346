package dash_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The task page shows that a task asks for an auto timeout, and beside
// each attempt the timeout it ran under and how it was chosen.
func TestTaskPageShowsAutoTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	ts, err := st.Enqueue(ctx, []task.NewTask{{Kind: "nightly", Timeout: task.AutoTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Claim(ctx, store.ClaimRequest{Worker: "w1", Kinds: []string{"nightly"}, Limit: 1, Lease: time.Minute})
	if err != nil || len(c) != 1 {
		t.Fatalf("claim: %v %v", c, err)
	}
	a := task.Attempt{Outcome: task.OutcomeSuccess, Timeout: 6 * time.Minute, TimeoutSource: "auto: 5 × p99 1m12s of 140 runs"}
	if _, err := st.Finish(ctx, []store.Finish{{TaskID: c[0].ID, Token: c[0].LeaseToken, State: task.Success, Attempt: a}}); err != nil {
		t.Fatal(err)
	}
	srv := newDashboard(t, st)
	_, body := get(t, srv.Client(), srv.URL+"/tasks/"+itoa(ts[0].ID))
	for _, want := range []string{"auto <span class=\"dim\">· learned from its successful runs", "(auto: 5 × p99 1m12s of 140 runs)"} {
		if !strings.Contains(body, want) {
			t.Errorf("task page: no %q", want)
		}
	}
}
