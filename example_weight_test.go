package grit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/grit-run/grit"
)

// Tenants take turns: acme's backlog, enqueued first, does not hold back
// globex, and acme, of weight 2, takes two tasks to globex's one.
func ExampleClient_SetTenantWeight() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{Concurrency: 1})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if err := c.SetTenantWeight(ctx, "acme", 2); err != nil {
		panic(err)
	}
	for range 6 {
		c.Enqueue(ctx, "bill", "acme", grit.ForTenant("acme"))
	}
	for range 3 {
		c.Enqueue(ctx, "bill", "globex", grit.ForTenant("globex"))
	}
	var order []string
	done := make(chan struct{})
	grit.Handle(c, "bill", func(ctx context.Context, tenant string) error {
		if order = append(order, tenant); len(order) == 9 {
			close(done)
		}
		return nil
	}, grit.HandlerConfig{})
	c.Start(ctx)
	<-done
	c.Stop(ctx)
	fmt.Println(strings.Join(order, " "))
	// Output: acme acme globex acme acme globex acme acme globex
}
