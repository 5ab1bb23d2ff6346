// Package server serves grit's gRPC API (api/gritv1) on a store: the
// TasksService (enqueue, enqueue in batches, get, list, attempts, cancel,
// publish, dead-letter actions) and the WorkersService, through which a
// worker in any language claims tasks, renews their leases and reports how
// each attempt ended, with the same leases, fencing and retry decisions as
// a Go worker (internal/decide decides), and the same downstream
// protection and lease rescue (internal/gate). Beside them it serves the
// standard health service and reflection, so grpcurl and
// grpc-health-probe work.
//
//	s, err := server.New(server.Config{Store: st, Tokens: tokens})
//	...
//	err = s.Serve(ctx, lis) // until ctx ends
//
// Requests carry "authorization: Bearer TOKEN"; a missing or wrong token
// is UNAUTHENTICATED. The health service needs none. Without tokens,
// authentication is off, which Serve allows only on a loopback address
// (Insecure). Tokens come from a file and GRIT_TOKENS (LoadTokens).
//
// Every request is checked before anything is written; a bad one is
// INVALID_ARGUMENT with a message naming the field, what was wrong and
// what to do, and a google.rpc.BadRequest detail. Payloads are JSON of at
// most Config.MaxPayload (1 MiB); batches at most Config.MaxBatch (1000)
// items. A request larger than Config.MaxMessage (16 MiB) is refused
// without being decoded, INVALID_ARGUMENT with the reason
// MESSAGE_TOO_LARGE (past twice it, by gRPC before it is read, with
// RESOURCE_EXHAUSTED).
//
// Writes are idempotent: an enqueue with an idempotency key used before,
// or an event with a key published before, returns what the first made; a
// cancel or dead-letter action already applied returns the task; a
// Complete, Fail or Snooze (or a Report's result) already recorded under
// its lease token answers OK. A report under a lease token that is no longer the task's is
// FAILED_PRECONDITION (task.ErrLeaseLost) and changes nothing.
//
// Every error also carries a google.rpc.ErrorInfo, domain "grit", whose
// reason (gritv1.ReasonLeaseLost, ReasonWrongState, ReasonTaskNotFound…)
// and metadata a program decides on instead of the message; errors.go
// decides them, and docs/api.md lists them.
package server
