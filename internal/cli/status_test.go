package cli

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/rate"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestStatusSaysWhatWaits: grit status names the work that waits for a
// probe (a kind held as an outage), for a ramp (a group whose breaker
// closed lately) and for a rate (a tenant's, with tasks turned away), and
// says why; --json carries the same.
func TestStatusSaysWhatWaits(t *testing.T) {
	t.Parallel()
	dsn := migratedStore(t)
	ctx := t.Context()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	now, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var s breaker.Settings
	if _, err := st.UpdateGroup(ctx, store.KindHold+"sync", func(g *store.Group) {
		s.Trip(&g.Circuit, now, 0)
		g.Outage = &store.Outage{Error: "connect: connection refused", Kind: "sync", Since: now}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateGroup(ctx, "payments", func(g *store.Group) {
		s.Trip(&g.Circuit, now.Add(-time.Minute), 0)
		s.Close(&g.Circuit, now.Add(-time.Second))
	}); err != nil {
		t.Fatal(err)
	}
	acme := store.RateKey{Scope: store.ScopeTenant, Name: "acme"}
	if err := st.SetRate(ctx, store.Rate{RateKey: acme, Limit: rate.Limit{Rate: 1.0 / 60, Burst: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := st.TakeRates(ctx, []store.RateKey{acme}, func(rs map[store.RateKey]*store.Rate) {
		r := rs[acme]
		r.Bucket.Take(11, r.Limit.Rate, r.Limit.Burst, now) // one goes; ten come back a minute apart
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	code, out, errOut := grit(t, "status", "--store", dsn)
	for _, want := range []string{
		`held: kind sync waits for a probe of its downstream (next `,
		`held as an outage of "connect: connection refused"`,
		`held: group payments ramps up after its breaker closed: 10 calls a second`,
		`held: tenant acme waits for its rate of 1/m burst 1: about 10 tasks`,
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("grit status: exit %d, no %q in\n%s%s", code, want, out, errOut)
		}
	}
	code, out, _ = grit(t, "status", "--store", dsn, "--json")
	var r statusReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("grit status --json: exit %d: %s", code, out)
	}
	if len(r.Holds) != 2 || r.Holds[0].Kind != "sync" && r.Holds[1].Kind != "sync" || len(r.Rated) != 1 || r.Rated[0].Waiting != 10 {
		t.Errorf("grit status --json: holds %+v, rated %+v", r.Holds, r.Rated)
	}
	for _, h := range r.Holds {
		if h.Group == "payments" && (h.Wait != ops.WaitRamp || h.Rate != 10) || h.Kind == "sync" && h.Wait != ops.WaitProbe {
			t.Errorf("hold %+v", h)
		}
	}
}

// TestStatusFlagsUnservedKinds: work due for a minute whose kind no live
// worker serves is flagged by grit status (and --json), naming the kind;
// a kind a live worker serves is not.
func TestStatusFlagsUnservedKinds(t *testing.T) {
	t.Parallel()
	dsn := migratedStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A worker that serves exec (and the other kinds grit worker has),
	// paused on its queue so that it claims nothing of what waits here.
	if _, err := st.(store.Pauser).Pause(ctx, store.Pause{Scope: store.ScopeQueue, Name: "default", Who: "test"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"worker", "--store", dsn, "--worker-id", "w1"}, io.Discard, io.Discard)
	}()
	defer func() { cancel(); <-done }()
	poll.Until(t, time.Minute, "the worker to register its kinds", func() bool {
		ws, err := st.Workers(ctx)
		return err == nil && len(ws) == 1 && slices.Contains(ws[0].Kinds, task.KindExec)
	})
	long := now.Add(-2 * ops.UnservedAfter)
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "thumbnail", RunAt: long}, {Kind: "thumbnail", RunAt: long},
		{Kind: task.KindExec, Args: []byte(`{"shell":"true"}`), RunAt: long}}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := grit(t, "status", "--store", dsn)
	if want := "unserved: kind thumbnail: 2 or more tasks due since"; code != 0 || !strings.Contains(out, want) || strings.Contains(out, "unserved: kind exec") {
		t.Errorf("grit status: exit %d, want %q and no unserved exec in\n%s%s", code, want, out, errOut)
	}
	code, out, _ = grit(t, "status", "--store", dsn, "--json")
	var r statusReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("grit status --json: exit %d: %s", code, out)
	}
	if len(r.Unserved) != 1 || r.Unserved[0].Kind != "thumbnail" || r.Unserved[0].Tasks != 2 || !r.Unserved[0].Since.Equal(long) {
		t.Errorf("grit status --json: unserved %+v, want thumbnail's 2 tasks due since %v", r.Unserved, long)
	}
}
