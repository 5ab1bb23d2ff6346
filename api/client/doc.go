// Package client is grit's Go client for the gRPC API (api/gritv1): it
// enqueues tasks one at a time or batched, reads and cancels them,
// reports a remote worker's results in batches (Report, and SendResult,
// which gathers many goroutines' results into one Report), lets a remote
// worker's handler set bad rows aside and go on (WithAttempt, Quarantine,
// Saw, Completed, as grit.Quarantine in a Go handler), and survives burst
// load and a slow or failing server.
//
// Calls are retried in three layers that draw on one budget:
//
//  1. Channel: gRPC's own retry policy from the service config
//     (grpcretry.Default: UNAVAILABLE, RESOURCE_EXHAUSTED and
//     DEADLINE_EXCEEDED from the server; up to 5 attempts, 0.1s to 10s,
//     with retry throttling).
//  2. Call: an interceptor that gives each attempt its own deadline
//     (Config.Timeout) and retries UNAVAILABLE, INTERNAL and
//     DEADLINE_EXCEEDED twice, after 50ms then 100ms.
//  3. Batch: Send buffers tasks into EnqueueBatch calls (batch package);
//     a failed batch is retried as a whole (Config.SendRetries, from
//     Config.SendBackoff doubling to four times it, with jitter).
//     SendResult's reports are batched and retried the same way: a
//     result recorded by a report whose answer was lost answers OK when
//     sent again.
//
// The budget is a retry.Allowance carried in the call's context: the
// outermost layer puts it there (the batch, or the call for a direct one),
// and every retry of every layer takes one from it; a channel retry that
// finds none left ends the call with the error of the attempt before. So
// the layers never multiply each other's attempts. Every write carries an
// idempotency key (the client makes one when the caller gave none), so a
// retry after an answer was lost never makes a second task.
//
// A server's error carries a reason (gritv1.ReasonLeaseLost,
// ReasonTaskNotFound…) that Reason and ErrorInfo read, so that a program
// tells errors apart without parsing their messages.
package client
