package directives_test

import (
	"testing"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/examples/directives"
	"github.com/grit-run/grit/grittest"
	"github.com/grit-run/grit/task"
)

// client is a grittest client with the handlers grit gen registers.
func client(t *testing.T) *grittest.Client {
	t.Helper()
	c := grittest.NewClient(t, grit.Config{})
	if err := directives.RegisterHandlers(c.Client); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDeclinedCardIsCaught: a declined card fails charge_card on its
// first attempt, whatever its //grit:retry policy allows, and enqueues
// its catch, refund_order, with the failure; the refund then runs.
func TestDeclinedCardIsCaught(t *testing.T) {
	t.Parallel()
	c := client(t)
	charge := directives.Charge{Order: "o-42", Cents: 1999, Card: "declined"}
	r := c.Work(t, "charge_card", charge)
	if r.Task.State != task.Failed || r.Attempt.Number != 1 || r.Task.LastError != "card declined" {
		t.Fatalf("charge_card is %s after attempt %d (%q): want FAILED at once, card declined", r.Task.State, r.Attempt.Number, r.Task.LastError)
	}
	refund := grittest.RequireEnqueued(t, c, "refund_order", func(cg task.Caught) bool { return cg.Task == r.Task.ID })
	if refund.Args.Error != "card declined" || refund.Args.Attempts != 1 {
		t.Errorf("the refund is told %q after %d attempts: want card declined after 1", refund.Args.Error, refund.Args.Attempts)
	}
	if got := c.WorkTask(t, refund.ID); got.Task.State != task.Success {
		t.Fatalf("refund_order is %s (%q), want SUCCESS", got.Task.State, got.Task.LastError)
	}
	select { // the handler ran within WorkTask: what it passed on is there
	case caught := <-directives.Refunds:
		if caught.Task != r.Task.ID {
			t.Errorf("the refund handler was told of task %d, want %d", caught.Task, r.Task.ID)
		}
	default:
		t.Error("the refund handler passed nothing on")
	}
}

// TestGoodCardIsNotCaught: a charge that succeeds calls for no refund.
func TestGoodCardIsNotCaught(t *testing.T) {
	t.Parallel()
	c := client(t)
	if r := c.Work(t, "charge_card", directives.Charge{Order: "o-43", Cents: 500, Card: "visa"}); r.Task.State != task.Success {
		t.Fatalf("charge_card is %s (%q), want SUCCESS", r.Task.State, r.Task.LastError)
	}
	if refunds := grittest.Enqueued[task.Caught](t, c, "refund_order"); len(refunds) != 0 {
		t.Errorf("a successful charge enqueued refunds: %+v", refunds)
	}
}
