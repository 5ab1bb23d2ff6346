package grit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

type rows struct {
	Rows []int `json:"rows"`
}

type row struct {
	N int `json:"n"`
}

// importRows sets aside the rows that are multiples of 4 ("bad date") and
// of 5 ("no account"), reporting every row it saw.
func importRows(ctx context.Context, a rows) error {
	for _, n := range a.Rows {
		var err error
		switch {
		case n%4 == 0:
			err = fmt.Errorf("row %d: bad date %q", n, "2026-13-0"+fmt.Sprint(n%9))
		case n%5 == 0:
			err = fmt.Errorf("row %d: no account %d", n, 1000+n)
		}
		if err != nil {
			if qerr := grit.Quarantine(ctx, row{n}, err); qerr != nil {
				return qerr
			}
		}
	}
	return grit.Saw(ctx, len(a.Rows))
}

func openQuarantine(t *testing.T, pol grit.QuarantinePolicy) (*grit.Client, *alerts) {
	t.Helper()
	al := &alerts{}
	c, err := grit.Open(context.Background(), sqlitetest.DSN(t), grit.Config{Concurrency: 4, Alerting: grit.Alerting{OnAlert: al.add}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := grit.Handle(c, "import", importRows, grit.HandlerConfig{Policy: "3 1ms", Quarantine: pol}); err != nil {
		t.Fatal(err)
	}
	return c, al
}

type alerts struct {
	mu  sync.Mutex
	got []grit.Alert
}

func (a *alerts) add(e grit.Alert) {
	a.mu.Lock()
	a.got = append(a.got, e)
	a.mu.Unlock()
}

// TestQuarantineOneRowOfTen: a handler that sets one bad row of ten aside
// succeeds; the row waits with its fingerprint, raises one alert, and
// replays as a task of its own.
func TestQuarantineOneRowOfTen(t *testing.T) {
	t.Parallel()
	c, al := openQuarantine(t, grit.QuarantinePolicy{Kind: "import.row", Max: 3})
	var mu sync.Mutex
	var replayed []int
	err := grit.Handle(c, "import.row", func(ctx context.Context, r row) error {
		mu.Lock()
		replayed = append(replayed, r.N)
		mu.Unlock()
		return nil
	}, grit.HandlerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, c)
	ctx := context.Background()
	e, err := c.Enqueue(ctx, "import", rows{[]int{1, 2, 3, 4, 6, 7, 9, 11, 13, 14}})
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, c, e.Task.ID, task.Success)
	items, err := c.Quarantined(ctx, task.QuarantineFilter{TaskID: e.Task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || string(items[0].Item) != `{"n":4}` || items[0].ReplayKind != "import.row" || items[0].Kind != "import" ||
		!strings.Contains(items[0].Error, "bad date") || items[0].Fingerprint != retry.Fingerprint(errors.New(items[0].Error)) {
		t.Fatalf("quarantined %+v, want row 4 with its error's fingerprint", items)
	}
	gs, err := c.QuarantineGroups(ctx)
	if err != nil || len(gs) != 1 || gs[0].Count != 1 || gs[0].Fingerprint != items[0].Fingerprint {
		t.Fatalf("groups %+v, %v", gs, err)
	}
	al.mu.Lock()
	var q []grit.Alert
	for _, a := range al.got {
		if a.Type == grit.AlertQuarantined {
			q = append(q, a)
		}
	}
	al.mu.Unlock()
	if len(q) != 1 || q[0].TaskID != e.Task.ID || q[0].Tasks != 1 || q[0].Fingerprint != items[0].Fingerprint {
		t.Errorf("quarantine alerts %+v, want one for the task's one row", q)
	}
	es, err := c.ReplayQuarantined(ctx, nil, items[0].Fingerprint)
	if err != nil || len(es) != 1 || es[0].Task.Kind != "import.row" {
		t.Fatalf("replay: %+v, %v", es, err)
	}
	waitTask(t, c, es[0].Task.ID, task.Success)
	mu.Lock()
	defer mu.Unlock()
	if len(replayed) != 1 || replayed[0] != 4 {
		t.Errorf("replayed rows %v, want [4]", replayed)
	}
	if left, _ := c.Quarantined(ctx, task.QuarantineFilter{}); len(left) != 0 {
		t.Errorf("a replayed item is still quarantined: %+v", left)
	}
	// Replaying again finds nothing, and enqueues nothing.
	if again, err := c.ReplayQuarantined(ctx, []int64{items[0].ID}, ""); err != nil || len(again) != 0 {
		t.Errorf("a second replay: %+v, %v", again, err)
	}
}

// TestQuarantinePastItsMax: a task that sets aside more rows than its
// handler tolerates fails, permanently, saying so; its rows stay.
func TestQuarantinePastItsMax(t *testing.T) {
	t.Parallel()
	c, _ := openQuarantine(t, grit.QuarantinePolicy{Kind: "import.row", Max: 2})
	startClient(t, c)
	ctx := context.Background()
	e, err := c.Enqueue(ctx, "import", rows{[]int{4, 5, 8, 1}})
	if err != nil {
		t.Fatal(err)
	}
	tk := waitTask(t, c, e.Task.ID, task.Failed)
	if tk.Attempt != 1 || !strings.Contains(tk.LastError, "set aside 3 items, more than the 2 it tolerates") {
		t.Errorf("task %+v: want one attempt failed for its three rows", tk)
	}
	if items, _ := c.Quarantined(ctx, task.QuarantineFilter{TaskID: e.Task.ID}); len(items) != 3 {
		t.Errorf("quarantined %d items, want the 3 kept", len(items))
	}
}

// TestQuarantinePastItsShare: a share of the rows the task reported it
// saw bounds it too, judged when its handler returns.
func TestQuarantinePastItsShare(t *testing.T) {
	t.Parallel()
	c, _ := openQuarantine(t, grit.QuarantinePolicy{MaxShare: 0.1})
	startClient(t, c)
	ctx := context.Background()
	ok, err := c.Enqueue(ctx, "import", rows{[]int{1, 2, 3, 4, 6, 7, 9, 11, 13, 14}}) // 1 of 10
	if err != nil {
		t.Fatal(err)
	}
	bad, err := c.Enqueue(ctx, "import", rows{[]int{1, 2, 3, 4, 5, 6, 7, 9, 11, 13}}) // 2 of 10
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, c, ok.Task.ID, task.Success)
	tk := waitTask(t, c, bad.Task.ID, task.Failed)
	if !strings.Contains(tk.LastError, "set aside 2 of the 10 items") {
		t.Errorf("error %q", tk.LastError)
	}
	// An item with no replay kind cannot be replayed: it stays.
	items, _ := c.Quarantined(ctx, task.QuarantineFilter{TaskID: ok.Task.ID})
	if _, err := c.ReplayQuarantined(ctx, []int64{items[0].ID}, ""); err == nil || !strings.Contains(err.Error(), "names no kind to replay it as") {
		t.Errorf("replay without a kind: %v", err)
	}
	if n, err := c.DropQuarantined(ctx, []int64{items[0].ID}, ""); n != 1 || err != nil {
		t.Errorf("drop: %d, %v", n, err)
	}
}

// TestQuarantineOutsideAHandler: a context that is not a handler's is
// told so.
func TestQuarantineOutsideAHandler(t *testing.T) {
	t.Parallel()
	if err := grit.Quarantine(context.Background(), row{1}, errors.New("x")); !errors.Is(err, grit.ErrNoAttempt) {
		t.Errorf("outside a handler: %v", err)
	}
	if err := grit.Quarantine(context.Background(), row{1}, nil); err == nil {
		t.Error("no error: accepted")
	}
}

// TestQuarantineIsolated: an isolated handler's child sets rows aside
// through its worker, which counts them and judges the share.
func TestQuarantineIsolated(t *testing.T) {
	t.Parallel()
	c := openIsolated(t, grit.Isolation{})
	startClient(t, c)
	ok := enqueueKind(t, c, "iso.import", rows{[]int{1, 2, 3, 4, 6, 7, 9, 11, 13, 14}})
	bad := enqueueKind(t, c, "iso.import", rows{[]int{1, 2, 3, 4, 5, 6, 7, 9, 11, 13}})
	waitTask(t, c, ok, task.Success)
	tk := waitTask(t, c, bad, task.Failed)
	if !strings.Contains(tk.LastError, "set aside 2 of the 10 items") {
		t.Errorf("error %q", tk.LastError)
	}
	items, err := c.Quarantined(context.Background(), task.QuarantineFilter{TaskID: ok})
	if err != nil || len(items) != 1 || string(items[0].Item) != `{"n":4}` || items[0].ReplayKind != "import.row" {
		t.Errorf("quarantined %+v, %v", items, err)
	}
}
