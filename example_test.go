package grit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/breaker"
	"github.com/grit-run/grit/task"
)

func Example() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	type email struct{ To string }
	done := make(chan struct{})
	grit.Handle(c, "email", func(ctx context.Context, e email) error {
		a, _ := grit.AttemptFrom(ctx)
		fmt.Printf("sending to %s, attempt %d\n", e.To, a.Number)
		close(done)
		return nil
	}, grit.HandlerConfig{Policy: "4 1s 1m", Timeout: 10 * time.Second, Group: "smtp"})

	t, _ := c.Enqueue(ctx, "email", email{To: "ops@example.com"}, grit.WithKey("welcome-ops"))
	c.Start(ctx)
	<-done
	c.Stop(ctx)

	done2, _ := c.Task(ctx, t.ID)
	fmt.Println(done2.State == task.Success)
	// Output:
	// sending to ops@example.com, attempt 1
	// true
}

// Subscribers of a topic each get a task of their kind for every event
// published to it; a key makes publishing idempotent.
func ExampleClient_Publish() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	c.Subscribe(ctx, task.Subscription{Topic: "order.paid", Kind: "ship"})
	c.Subscribe(ctx, task.Subscription{Topic: "order.paid", Kind: "receipt", Queue: "mail"})
	type paid struct{ Order string }
	ds, _ := c.Publish(ctx, "order.paid", paid{"o-42"}, grit.EventKey("o-42"))
	for _, d := range ds {
		fmt.Println(d.Kind, d.Queue, string(d.Args))
	}
	again, _ := c.Publish(ctx, "order.paid", paid{"o-42"}, grit.EventKey("o-42"))
	fmt.Println("again, same deliveries:", again[0].ID == ds[0].ID && again[1].ID == ds[1].ID)
	// Output:
	// receipt mail {"Order":"o-42"}
	// ship default {"Order":"o-42"}
	// again, same deliveries: true
}

// An idempotency key names one piece of work: enqueued again, the same
// work answers the task that holds the key, Existed; other work under it
// is refused unless the caller asks for the existing task.
func ExampleWithKey() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	type charge struct {
		Order string
		Cents int
	}
	first, _ := c.Enqueue(ctx, "charge", charge{"o-42", 1999}, grit.WithKey("charge-o-42"))
	again, _ := c.Enqueue(ctx, "charge", charge{"o-42", 1999}, grit.WithKey("charge-o-42"))
	fmt.Println(first.ID == again.ID, first.Existed, again.Existed)

	_, err = c.Enqueue(ctx, "charge", charge{"o-42", 2999}, grit.WithKey("charge-o-42"))
	var conflict *task.KeyConflictError
	fmt.Println(errors.Is(err, grit.ErrKeyConflict), errors.As(err, &conflict) && conflict.Existing == first.ID, conflict.Differs)

	kept, _ := c.Enqueue(ctx, "charge", charge{"o-42", 2999}, grit.WithKey("charge-o-42"), grit.ReturnExisting())
	fmt.Println(kept.ID == first.ID, kept.Existed)
	// Output:
	// true false true
	// true true args
	// true true
}

// A task that fails the same way twice in a row is dead-lettered, and
// OnAlert hears of it once the store has recorded it. (AlertWebhook
// POSTs the same alert as JSON.)
func ExampleAlerting() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	alerts := make(chan grit.Alert, 1)
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{
		Alerting: grit.Alerting{OnAlert: func(a grit.Alert) { alerts <- a }},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	type order struct{ ID string }
	grit.Handle(c, "charge", func(ctx context.Context, o order) error {
		return fmt.Errorf("charge %s: card declined", o.ID)
	}, grit.HandlerConfig{Policy: "4 10ms"})
	c.Enqueue(ctx, "charge", order{"o-42"})
	c.Start(ctx)
	a := <-alerts
	c.Stop(ctx)

	fmt.Println(a.Type == grit.AlertDeadLetter, a.Kind, a.Attempt)
	fmt.Println(a.Error)
	fmt.Println(a.Link)
	// Output:
	// true charge 2
	// charge o-42: card declined
	// grit task 1
}

// An outage is not poison: six tasks of a kind fail alike and none
// succeeds, so the kind is held (an alert says so) rather than each task
// dead-lettered (one dead-lettered before the failure had spread is
// replayed); once the failure stops, a probe succeeds, the hold ends and
// every task succeeds.
func ExampleProtection_outage() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	alerts := make(chan grit.Alert, 10)
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{
		Protection: grit.Protection{Breaker: breaker.Settings{CoolDown: 100 * time.Millisecond}},
		Alerting:   grit.Alerting{OnAlert: func(a grit.Alert) { alerts <- a }},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	var down atomic.Bool
	down.Store(true)
	succeeded := make(chan int, 6)
	grit.Handle(c, "sync", func(ctx context.Context, n int) error {
		if down.Load() {
			return errors.New("ledger: row 1234 is locked by migration 77")
		}
		succeeded <- n
		return nil
	}, grit.HandlerConfig{Policy: "10 100ms 1s jitter=equal"})
	var ids []int64
	for n := range 6 {
		t, _ := c.Enqueue(ctx, "sync", n)
		ids = append(ids, t.ID)
	}
	c.Start(ctx)
	for held := false; !held; { // a task that failed twice first may have been dead-lettered, then replayed
		select {
		case a := <-alerts:
			if held = a.Type == grit.AlertOutageHeld; held {
				fmt.Println(a.Type, a.Kind)
			}
		case <-time.After(20 * time.Second):
			fmt.Println("no outage held")
			held = true
		}
	}
	down.Store(false)
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for range ids {
		select {
		case <-succeeded:
		case <-wait.Done():
		}
	}
	c.Stop(ctx) // waits for the successes to be recorded
	for _, id := range ids {
		t, _ := c.Task(ctx, id)
		fmt.Print(t.State, " ")
	}
	// Output:
	// outage_held sync
	// SUCCESS SUCCESS SUCCESS SUCCESS SUCCESS SUCCESS
}

// A durable step runs once per task: when the handler fails after its
// first step and is retried, the step answers its recorded result instead
// of charging again.
func ExampleStep() {
	dir, _ := os.MkdirTemp("", "grit-example-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := grit.Open(ctx, "sqlite:"+filepath.Join(dir, "grit.db"), grit.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	done := make(chan struct{})
	grit.Handle(c, "pay", func(ctx context.Context, order string) error {
		a, _ := grit.AttemptFrom(ctx)
		charge, err := grit.Step(ctx, "charge", func(ctx context.Context) (string, error) {
			fmt.Printf("attempt %d charges %s\n", a.Number, order)
			return "ch-" + order, nil
		})
		if err != nil {
			return err
		}
		if a.Number == 1 {
			return errors.New("mail server: connection reset") // retried
		}
		fmt.Printf("attempt %d mails the receipt of %s\n", a.Number, charge)
		close(done)
		return nil
	}, grit.HandlerConfig{Policy: "3 10ms 10ms"})

	c.Enqueue(ctx, "pay", "o-42")
	c.Start(ctx)
	<-done
	c.Stop(ctx)
	// Output:
	// attempt 1 charges o-42
	// attempt 2 mails the receipt of ch-o-42
}
