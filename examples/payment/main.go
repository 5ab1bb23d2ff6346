// Command payment runs a payment state machine on the embedded store:
//
//	go run ./examples/payment
//
// Each order is an instance of the machine: created → authorized →
// captured, and refunded after, or failed when a state's handler fails
// for good. The bank refuses the first two authorizations of each order
// with a transient error: the authorize state is retried within its
// execution, the instance held in its transition, not restarted. Capture
// is a handler of two durable steps: it charges the card, then writes the
// ledger, whose first write times out; the retry resumes after the charge,
// so each card is charged once. An order whose card is declined
// (permanently) goes to failed, and the capture sent after is ignored.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/retry"
)

// Payment is the machine.
var Payment = fsm.Machine{
	Name: "payment", Initial: "created",
	States: []fsm.State{
		{Name: "created"},
		{Name: "authorized", Kind: "payment.authorize"},
		{Name: "captured", Kind: "payment.capture"},
		{Name: "refunded", Kind: "payment.refund"},
	},
	Transitions: []fsm.Transition{
		{From: "created", Event: "authorize", To: "authorized"},
		{From: "authorized", Event: "capture", To: "captured"},
		{From: "captured", Event: "refund", To: "refunded"},
	},
}

// order is an event's payload.
type order struct {
	Cents    int  `json:"cents"`
	Declined bool `json:"declined,omitempty"`
}

// bank counts what the handlers did, to show (and test) that retries stay
// in their execution and that steps ran once.
type bank struct {
	mu             sync.Mutex
	authorizations map[string]int
	charges        map[string]int
	ledgerWrites   map[string]int
}

func newBank() *bank {
	return &bank{authorizations: map[string]int{}, charges: map[string]int{}, ledgerWrites: map[string]int{}}
}

func (b *bank) count(m map[string]int, key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	m[key]++
	return m[key]
}

// report is what a run did.
type report struct {
	States         map[string]string // order -> state
	History        map[string][]string
	Authorizations map[string]int
	Charges        map[string]int
}

func run(ctx context.Context, dsn string, out io.Writer) (report, error) {
	c, err := grit.Open(ctx, dsn, grit.Config{Machines: []fsm.Machine{Payment}, Concurrency: 4})
	if err != nil {
		return report{}, err
	}
	defer c.Close()
	b := newBank()
	if err := handle(c, b); err != nil {
		return report{}, err
	}
	if err := sendOrders(ctx, c); err != nil {
		return report{}, err
	}
	if err := c.Start(ctx); err != nil {
		return report{}, err
	}
	defer c.Stop(context.WithoutCancel(ctx))
	rep, err := await(ctx, c, map[string]string{"o-1": "captured", "o-2": "refunded", "o-3": "failed"})
	if err != nil {
		return report{}, err
	}
	b.mu.Lock()
	rep.Authorizations, rep.Charges = b.authorizations, b.charges
	b.mu.Unlock()
	for _, key := range []string{"o-1", "o-2", "o-3"} {
		fmt.Fprintf(out, "%s %s: authorized after %d tries, charged %d times\n  %s\n", key, rep.States[key],
			rep.Authorizations[key], rep.Charges[key], strings.Join(rep.History[key], "\n  "))
	}
	return rep, nil
}

// handle gives the machine's states their handlers, retried fast enough
// for an example.
func handle(c *grit.Client, b *bank) error {
	fast := grit.HandlerConfig{Policy: "5 20ms 100ms"}
	return errors.Join(
		grit.Handle(c, "payment.authorize", b.authorize, fast),
		grit.Handle(c, "payment.capture", b.capture, fast),
		grit.Handle(c, "payment.refund", func(context.Context, fsm.Input) error { return nil }, fast))
}

// authorize refuses a declined card for good, and the first two
// authorizations of every other order for now.
func (b *bank) authorize(_ context.Context, in fsm.Input) error {
	n := b.count(b.authorizations, in.Key)
	var o order
	_ = decode(in, &o)
	switch {
	case o.Declined:
		return retry.Permanent(errors.New("card declined"))
	case n <= 2:
		return retry.Transient(fmt.Errorf("bank: connection reset (authorization %d)", n))
	}
	return nil
}

// capture charges the card, then writes the ledger, each a durable step;
// the ledger's first write times out.
func (b *bank) capture(ctx context.Context, in fsm.Input) error {
	if _, err := grit.Step(ctx, "charge", func(context.Context) (string, error) {
		return fmt.Sprintf("ch-%s-%d", in.Key, b.count(b.charges, in.Key)), nil
	}); err != nil {
		return err
	}
	_, err := grit.Step(ctx, "ledger", func(context.Context) (bool, error) {
		if b.count(b.ledgerWrites, in.Key) == 1 {
			return false, retry.Transient(errors.New("ledger: write timed out"))
		}
		return true, nil
	})
	return err
}

// sendOrders sends the orders' events: o-2 is refunded after its capture,
// and o-3's card is declined.
func sendOrders(ctx context.Context, c *grit.Client) error {
	orders := map[string][]string{"o-1": {"authorize", "capture"}, "o-2": {"authorize", "capture", "refund"}, "o-3": {"authorize", "capture"}}
	for _, key := range []string{"o-1", "o-2", "o-3"} {
		for _, ev := range orders[key] {
			if _, err := c.Send(ctx, "payment", key, ev, order{Cents: 1250, Declined: key == "o-3"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// await waits, 30s at most, for each order to settle in the state it
// should end in, and reports the states and histories.
func await(ctx context.Context, c *grit.Client, want map[string]string) (report, error) {
	rep := report{States: map[string]string{}, History: map[string][]string{}}
	deadline := time.Now().Add(30 * time.Second)
	for key, state := range want {
		in, err := settled(ctx, c, key, state, deadline)
		if err != nil {
			return report{}, err
		}
		rep.States[key] = in.State
		rep.History[key] = history(in)
	}
	return rep, nil
}

// settled polls order key until it is in state with no event left to
// handle, or the deadline passes.
func settled(ctx context.Context, c *grit.Client, key, state string, deadline time.Time) (fsm.Instance, error) {
	for {
		in, err := c.Instance(ctx, "payment", key)
		if err != nil {
			return fsm.Instance{}, err
		}
		if in.State == state && in.Entering == nil && len(in.Queue) == 0 {
			return in, nil
		}
		if time.Now().After(deadline) {
			return fsm.Instance{}, fmt.Errorf("order %s is %s after 30s, want %s", key, in.State, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// history is an instance's events, a line each: the transition or the
// state it stayed in, the outcome and why.
func history(in fsm.Instance) []string {
	var lines []string
	for _, h := range in.History {
		line := fmt.Sprintf("%s: %s -> %s %s", h.Event, h.From, h.To, h.Outcome)
		if h.To == "" {
			line = fmt.Sprintf("%s: in %s, %s", h.Event, h.From, h.Outcome)
		}
		if h.Why != "" {
			line += " (" + h.Why + ")"
		}
		lines = append(lines, line)
	}
	return lines
}

func decode(in fsm.Input, o *order) error {
	if len(in.Payload) == 0 {
		return nil
	}
	return json.Unmarshal(in.Payload, o)
}

func main() {
	dir, err := os.MkdirTemp("", "grit-payment-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	dsn := flag.String("store", "sqlite:"+filepath.Join(dir, "grit.db"), "the store")
	flag.Parse()
	if _, err := run(context.Background(), *dsn, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "payment:", err)
		os.Exit(1)
	}
}
