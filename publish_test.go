package grit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

type batchReady struct {
	Batch int `json:"batch"`
}

// TestHandlerPublishesWithItsSuccess: events a handler publishes are
// delivered when its attempt succeeds, once, and never for an attempt that
// fails.
func TestHandlerPublishesWithItsSuccess(t *testing.T) {
	t.Parallel()
	c := open(t)
	ctx := context.Background()
	if err := c.Subscribe(ctx, task.Subscription{Topic: "batch.ready", Kind: "hook"}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var hooked []int
	err := grit.Handle(c, "ingest", func(ctx context.Context, a batchReady) error {
		if err := grit.Publish(ctx, "batch.ready", batchReady{a.Batch}); err != nil {
			return err
		}
		at, _ := grit.AttemptFrom(ctx)
		if at.Number == 1 {
			return retry.Transient(errors.New("cluster full")) // its event must not go out
		}
		return nil
	}, grit.HandlerConfig{Policy: "3 10ms"})
	if err != nil {
		t.Fatal(err)
	}
	err = grit.Handle(c, "hook", func(ctx context.Context, a batchReady) error {
		mu.Lock()
		defer mu.Unlock()
		hooked = append(hooked, a.Batch)
		return nil
	}, grit.HandlerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, c)
	tk, err := c.Enqueue(ctx, "ingest", batchReady{7}, grit.ForTenant("acme"))
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, c, tk.ID, task.Success)
	hooks, err := c.Tasks(ctx, task.Filter{Kind: "hook"})
	if err != nil || len(hooks) != 1 {
		t.Fatalf("%d hook deliveries (%v), want 1: the failed attempt's event must not go out", len(hooks), err)
	}
	if hooks[0].Tenant != "acme" {
		t.Errorf("delivery of tenant %q, want acme: a tenant's task publishes the tenant's events", hooks[0].Tenant)
	}
	waitTask(t, c, hooks[0].ID, task.Success)
	mu.Lock()
	defer mu.Unlock()
	if len(hooked) != 1 || hooked[0] != 7 {
		t.Errorf("hook saw %v, want [7]", hooked)
	}
}

func TestClientPublish(t *testing.T) {
	t.Parallel()
	c := open(t)
	ctx := context.Background()
	for _, kind := range []string{"mail", "ship"} {
		if err := c.Subscribe(ctx, task.Subscription{Topic: "order.paid", Kind: kind}); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := c.Publish(ctx, "order.paid", map[string]int{"order": 42}, grit.EventKey("o-42"))
	if err != nil || len(ds) != 2 || string(ds[0].Args) != `{"order":42}` {
		t.Fatalf("publish: %v (%v), want two deliveries with the payload", ds, err)
	}
	again, err := c.Publish(ctx, "order.paid", map[string]int{"order": 42}, grit.EventKey("o-42"))
	if err != nil || len(again) != 2 || again[0].ID != ds[0].ID {
		t.Errorf("published again with the key: %v (%v), want the same deliveries", again, err)
	}
	if ts, err := c.Publish(ctx, "order.paid", 1, grit.EventTenant("globex")); err != nil || len(ts) != 2 || ts[1].Tenant != "globex" {
		t.Errorf("published for a tenant: %+v (%v), want deliveries of tenant globex", ts, err)
	}
	if _, err := c.Publish(ctx, "bad topic", 1); !errors.Is(err, task.ErrInvalid) || !strings.Contains(err.Error(), `topic "bad topic"`) {
		t.Errorf("bad topic: %v", err)
	}
	if _, err := c.Publish(ctx, "order.paid", func() {}); err == nil || !strings.Contains(err.Error(), "does not encode as JSON") {
		t.Errorf("unencodable payload: %v", err)
	}
	if err := grit.Publish(ctx, "order.paid", 1); err == nil || !strings.Contains(err.Error(), "outside a handler") {
		t.Errorf("publish from a context that is no handler's: %v", err)
	}
	if _, err := c.PublishTx(ctx, nil, "order.paid", 1); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("PublishTx on SQLite: %v, want ErrInvalid", err)
	}
}
