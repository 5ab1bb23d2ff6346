// Package directives shows handlers that declare their retry policies and
// catch kinds in their doc comments, and the file grit gen writes from
// them (grit_handlers_gen.go, with RegisterHandlers). Run go generate in
// this directory after changing a directive; the test fails until you do.
package directives

import (
	"context"
	"errors"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

//go:generate go run ../../cmd/grit gen

// Charge is what charge_card takes.
type Charge struct {
	Order string `json:"order"`
	Cents int    `json:"cents"`
	Card  string `json:"card"`
}

// ErrDeclined is the card issuer's final no.
var ErrDeclined = errors.New("card declined")

// Refunds receives the failures that refund_order is told of; a real
// catch handler would release the order's stock or tell the customer.
var Refunds = make(chan task.Caught, 16)

// ChargeCard charges an order's card. A declined card fails at once;
// other errors are retried 5 times from 100ms up to 2s. When the task
// ends FAILED either way, a refund_order task is enqueued.
//
//grit:retry 5 100ms 2s catch refund_order
func ChargeCard(ctx context.Context, c Charge) error {
	if c.Card == "declined" {
		return retry.Permanent(ErrDeclined)
	}
	return nil
}

// RefundOrder is charge_card's catch handler: its args are the failed
// task, its kind, args, last error and attempts.
//
//grit:retry 10 1s 1m
func RefundOrder(ctx context.Context, c task.Caught) error {
	select {
	case Refunds <- c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SendReceipt mails the receipt of an order. Its kind is named, not
// derived from the function's name (which would be send_receipt).
//
//grit:handler email.receipt
//grit:retry 3 1s 10s
func SendReceipt(ctx context.Context, order string) error { return nil }
