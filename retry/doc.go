// Package retry decides, for a failed attempt, whether to try again and when.
//
// It is the policy core of grit, and it stands alone: it imports only the
// standard library, so a Go program can use it without the engine, a store or
// gRPC.
//
// The pieces:
//
//   - Backoffs: [Constant], [Exponential] (with [Jitter]: full, equal, none)
//     and [Decorrelated].
//   - [Policy]: attempts, backoff, a max elapsed time, explicit-only retries,
//     a schedule per class of failure ([ClassPolicy]), poison detection and
//     three hooks (interrupted, task error, commit error). Presets:
//     [CommonFourTimes] (the default), [CommonForever], [Never]. Policies
//     are also written as strings ([Parse]): "[count] min [max] [option…]",
//     e.g. "10 5s 10m" or "5 1s 1m transient=20,2s,5m".
//   - Classification: [Permanent], [Transient], [After] and [Resource] mark
//     errors, as does wrapping [ErrTransient] and its siblings; [Classify]
//     reads the marks and, for an unmarked error, infers an outage (a
//     refused or reset connection, an unreachable host, a timeout, a
//     temporary DNS failure, an unexpected EOF, a retryable gRPC status)
//     as transient: an outage is not poison. The table of what counts is
//     in the package's README (retry/README.md, "Classification").
//   - [Policy.Decide]: the decision an engine takes after a failed attempt.
//   - [Do]: in-process retries, honouring the context. Nested calls share
//     the outermost call's retries ([Allowance]), so layers never multiply.
//   - [Budget]: a token-bucket retry budget shared by many callers.
//   - [Fingerprint]: a stable hash of a failure's structure, for poison
//     detection.
package retry
