// Package grit is a durable, fault-tolerant task engine.
//
// Register a handler for a kind of task, enqueue tasks, and start a worker.
// Failed attempts are retried per the handler's retry.Policy with jittered
// backoff; an attempt that runs past its timeout is cut off; a task that
// fails the same way twice in a row is dead-lettered; a worker that dies
// loses nothing, because its leases expire and a sibling takes its tasks
// over.
//
//	c, err := grit.Open(ctx, "sqlite:grit.db", grit.Config{})
//	if err != nil { ... }
//	defer c.Close()
//
//	type Charge struct{ Order string; Cents int }
//	grit.Handle(c, "charge", func(ctx context.Context, a Charge) error {
//		err := payments.Charge(ctx, a.Order, a.Cents)
//		if errors.Is(err, payments.ErrDeclined) {
//			return retry.Permanent(err) // fails the task at once
//		}
//		return err // retried per the policy
//	}, grit.HandlerConfig{Policy: "4 1s 1m", Timeout: 30 * time.Second, Group: "payments-api"})
//
//	c.Enqueue(ctx, "charge", Charge{"o-42", 1999}, grit.WithKey("charge-o-42"))
//	c.Start(ctx)
//	defer c.Stop(ctx)
//
// Open knows the embedded SQLite store ("sqlite:PATH"). For a fleet of
// workers on PostgreSQL, import the driver and open "postgres://…":
//
//	import _ "github.com/grit-run/grit/store/postgres"
//
// On PostgreSQL, Client.EnqueueTx enqueues inside the caller's pgx
// transaction: the task exists if and only if it commits.
//
// What goes in and comes out is in package task: Client.EnqueueMany takes
// task.NewTask values, Client.SubmitRun a task.NewRun (a DAG of named
// tasks, as a task file's taskfile.File.NewRun makes), and Client.Task,
// Tasks (with a task.Filter), Attempts, Steps, Run and Workers read what
// the store holds; Client.Act replays, skips or fails a dead letter,
// cancels a task or retries a failed one. Package store is the drivers'
// contract: a user need not import it.
//
// A handler's context carries its attempt (AttemptFrom): the attempt
// number and the lease token, a fencing token to pass to downstream writes.
// A handler that returns Snooze(d) is tried again after d without using an
// attempt.
//
// Config.Alerting tells operators what needs them: a task dead-lettered, a
// group's circuit breaker opened. OnAlert is called with each Alert, and
// AlertWebhook is POSTed each as JSON, once the store has recorded it,
// without ever holding up the worker (docs/alerts.md).
package grit
