// Package batch turns many callers' single items into batched calls: each
// caller Sends one item and gets its own Future, and the Batcher calls
// Config.Flush once per batch (in grit, one batched gRPC enqueue).
//
// It exists for an incident: 92 callers started at once, their items went
// out in batches of 50, the first batch took 17s to be answered, the second
// hit the 30s deadline, and the exception killed the sending goroutine and
// every related job. Here a batch that fails with a transient error is
// retried as a whole, a failed batch fails only its own futures, and nothing
// stops the Batcher but Close.
//
// A batch is flushed when MaxSize items are buffered or Interval after its
// first item arrived. Each flush attempt runs under its own Timeout, on a
// context the Batcher owns, so that no single caller's cancellation aborts
// a batch that others wait on. A failed attempt is retried, with jittered
// exponential backoff, when it timed out or Config.Retryable says so.
//
// One retry budget serves every layer: each batch's flush context carries
// retry.WithAllowance(ctx, Retries), the batch layer takes its retries from
// it, and inner layers (a gRPC interceptor, retry.Do) draw from the same
// allowance through retry.AllowanceFrom. A batch thus costs at most
// 1 + Retries calls downstream, whichever of these layers retries.
//
// Flush reports a rejection of single items, as opposed to a failure of the
// whole batch, by returning ItemErrors: only those items' futures fail.
//
// Callers are honoured one by one: a caller whose context ends before its
// batch starts flushing gets the context's cause and its item is not sent;
// once the item is in flight, the caller stops waiting at once and the batch
// goes on for the others. At most MaxPending items are buffered or in
// flight, and at most MaxInFlight flushes run at once: Send blocks when the
// Batcher is full, so a slow downstream slows its callers down instead of
// filling memory or being stormed.
package batch
