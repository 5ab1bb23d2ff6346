// Package grpcretry teaches grit's retry core about gRPC, so that the core
// itself imports only the standard library.
//
// It does two things:
//
//   - Classification: [Classify] marks a gRPC status error with the
//     [retry] mark for its code ([Retryable] codes transient, [Permanent]
//     codes permanent, CANCELED as context cancellation), or with
//     [retry.After] when the status carries a google.rpc.RetryInfo.
//   - The channel retry layer: [ServiceConfig] builds the gRPC service-config
//     JSON (a retryPolicy and retryThrottling) that a client passes to
//     grpc.WithDefaultServiceConfig; [Default] is the one grit's client uses.
//
// grit's gRPC client retries in three layers (channel, call, batch) that all
// draw on one per-call budget; this package holds only the first layer's
// configuration and the code tables the others share.
package grpcretry
