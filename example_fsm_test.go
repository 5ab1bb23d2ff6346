package grit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/fsm"
)

// A state machine's instance takes its events one at a time, in order:
// the capture sent right after the authorize waits until the authorize
// state's handler has succeeded.
func ExampleClient_Send() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	payment := fsm.Machine{
		Name: "payment", Initial: "created",
		States: []fsm.State{{Name: "created"}, {Name: "authorized", Kind: "authorize"}, {Name: "captured", Kind: "capture"}},
		Transitions: []fsm.Transition{
			{From: "created", Event: "authorize", To: "authorized"},
			{From: "authorized", Event: "capture", To: "captured"},
		},
	}
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{Machines: []fsm.Machine{payment}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	moved := make(chan string, 2) // the state each handler moved the instance to
	for _, kind := range []string{"authorize", "capture"} {
		grit.Handle(c, kind, func(ctx context.Context, in fsm.Input) error {
			fmt.Printf("%s: %s -> %s\n", in.Key, in.From, in.To)
			moved <- in.To
			return nil
		}, grit.HandlerConfig{})
	}
	c.Send(ctx, "payment", "order-42", "authorize", nil)
	c.Send(ctx, "payment", "order-42", "capture", nil)
	c.Start(ctx)
	for to := ""; to != "captured"; {
		select {
		case to = <-moved:
		case <-time.After(30 * time.Second):
			panic("the payment was not captured within 30s")
		}
	}
	c.Stop(ctx) // waits for the capture's success to be recorded
	// Output:
	// order-42: created -> authorized
	// order-42: authorized -> captured
}
