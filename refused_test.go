package grit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

func TestRefusedResultSQLite(t *testing.T) {
	t.Parallel()
	path := sqlitetest.Path(t)
	testRefusedResult(t, "sqlite:"+path, func(kind, msg string) { sqlitetest.Refuse(t, path, kind, msg) })
}

func TestRefusedResultPostgres(t *testing.T) {
	t.Parallel()
	schema := pgtest.NewSchema(t)
	testRefusedResult(t, pgtest.WithSchema(schema), func(kind, msg string) { pgtest.Refuse(t, schema, kind, msg) })
}

// refusedCase is what testRefusedResult watches: the hooks of the other
// kinds, and the errors the refused kind's hook got.
type refusedCase struct {
	othersAsked atomic.Int64
	othersDone  atomic.Bool // from now on, the charge's hook fails its task
	chargeErrs  chan error
	started     atomic.Int64
	release     chan struct{}
}

// testRefusedResult: a worker whose store refuses the successes of two
// kinds (a trigger), with 30 tasks of three other kinds ending beside
// them: the 30 are all recorded within a few seconds and their policies'
// commit-error hooks are never asked; the refused charge's own hook gets
// its own error, and when it decides to fail the task the task ends
// FAILED, saying why; the refused refund, whose policy keeps trying, is
// still unrecorded when Stop is called with a 3s deadline, and Stop
// returns within it, naming the task it abandoned.
func testRefusedResult(t *testing.T, dsn string, refuse func(kind, msg string)) {
	c, err := grit.Open(context.Background(), dsn, grit.Config{Concurrency: 40})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	refuse("charge", "ledger closed")
	refuse("refund", "ledger closed")
	rc := &refusedCase{chargeErrs: make(chan error, 1000), release: make(chan struct{})}
	rc.handle(t, c)
	ctx := context.Background()
	charge, _ := c.Enqueue(ctx, "charge", struct{}{})
	refund, _ := c.Enqueue(ctx, "refund", struct{}{})
	var others []int64
	for _, kind := range []string{"mail", "thumb", "index"} {
		for range 10 {
			e, err := c.Enqueue(ctx, kind, struct{}{})
			if err != nil {
				t.Fatal(err)
			}
			others = append(others, e.Task.ID)
		}
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-rc.release
	deadline := time.Now().Add(5 * time.Second)
	for _, id := range others {
		waitTaskFor(t, c, id, task.Success, time.Until(deadline))
	}
	rc.othersDone.Store(true)
	got := waitTaskFor(t, c, charge.Task.ID, task.Failed, 20*time.Second)
	if !strings.Contains(got.LastError, "could not be recorded") || !strings.Contains(got.LastError, "ledger closed") {
		t.Errorf("the charge failed with %q, want its result's refusal", got.LastError)
	}
	if n := rc.othersAsked.Load(); n != 0 {
		t.Errorf("the other kinds' commit-error hooks were asked %d times, want never", n)
	}
	rc.checkChargeErrs(t, charge.Task.ID)
	stopWithin(t, c, 3*time.Second, refund.Task.ID)
	if got, _ := c.Task(ctx, refund.Task.ID); got.State != task.Running {
		t.Errorf("the refund is %s after the stop, want RUNNING (unrecorded: its lease lapses)", got.State)
	}
}

// handle registers the handlers: each waits until all 32 tasks run, so
// that their results come together.
func (rc *refusedCase) handle(t *testing.T, c *grit.Client) {
	t.Helper()
	run := func(ctx context.Context, _ struct{}) error {
		if rc.started.Add(1) == 32 {
			close(rc.release)
		}
		select {
		case <-rc.release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	others := &retry.Policy{MaxAttempts: 3, OnCommitError: func(a retry.Attempt, d retry.Decision) retry.Decision {
		rc.othersAsked.Add(1)
		return d
	}}
	charge := &retry.Policy{MaxAttempts: 3, OnCommitError: func(a retry.Attempt, d retry.Decision) retry.Decision {
		select {
		case rc.chargeErrs <- a.Err:
		default:
		}
		if rc.othersDone.Load() {
			return retry.Decision{Reason: retry.ReasonPermanent}
		}
		return d
	}}
	for kind, p := range map[string]*retry.Policy{"charge": charge, "refund": nil, "mail": others, "thumb": others, "index": others} {
		if err := grit.Handle(c, kind, run, grit.HandlerConfig{RetryPolicy: p}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkChargeErrs checks that every error the charge's hook got was its
// own refusal.
func (rc *refusedCase) checkChargeErrs(t *testing.T, id int64) {
	t.Helper()
	close(rc.chargeErrs)
	n := 0
	for err := range rc.chargeErrs {
		n++
		if !errors.Is(err, task.ErrRefused) || !strings.Contains(err.Error(), fmt.Sprintf("task %d ", id)) || !strings.Contains(err.Error(), "ledger closed") {
			t.Errorf("the charge's hook got %v, want its own refusal", err)
		}
	}
	if n == 0 {
		t.Error("the charge's hook was never asked")
	}
}

// stopWithin stops c with a deadline d while task id's result is still
// unrecorded: Stop returns within d and a second, saying it abandoned it.
func stopWithin(t *testing.T, c *grit.Client, d time.Duration, id int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	began := time.Now()
	err := c.Stop(ctx)
	if took := time.Since(began); took > d+time.Second {
		t.Errorf("Stop with a %v deadline returned after %v", d, took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), fmt.Sprint(id)) {
		t.Errorf("Stop: %v; want the deadline, naming task %d as abandoned", err, id)
	}
}
