package directives_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/examples/directives"
)

// A declined card fails charge_card at once (a permanent failure, whatever
// its //grit:retry policy allows); its catch, refund_order, runs exactly
// once with the failed task.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "grit-directives")
	defer os.RemoveAll(dir)
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if err := directives.RegisterHandlers(c); err != nil { // written by grit gen
		panic(err)
	}
	c.Enqueue(ctx, "charge_card", directives.Charge{Order: "o-42", Cents: 1999, Card: "declined"})
	c.Start(ctx)
	defer c.Stop(ctx)

	select {
	case caught := <-directives.Refunds:
		fmt.Printf("%s failed after %d attempt: %s\n", caught.Kind, caught.Attempts, caught.Error)
		fmt.Printf("its args: %s\n", caught.Args)
	case <-time.After(20 * time.Second):
		fmt.Println("no refund")
	}
	// Output:
	// charge_card failed after 1 attempt: card declined
	// its args: {"order":"o-42","cents":1999,"card":"declined"}
}
