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
//     poison detection and three hooks (interrupted, task error, commit
//     error). Presets: [CommonFourTimes] (the default), [CommonForever],
//     [Never]. Policies are also written as strings ([Parse]):
//     "[count] min [max]", e.g. "10 5s 10m".
//   - Classification: [Permanent], [Transient], [After] and [Resource] mark
//     errors; [Classify] reads the marks.
//   - [Policy.Decide]: the decision an engine takes after a failed attempt.
//   - [Do]: in-process retries, honouring the context and any retry budget an
//     outer layer put in it ([WithAllowance]).
//   - [Budget]: a token-bucket retry budget shared by many callers.
//   - [Fingerprint]: a stable hash of a failure's structure, for poison
//     detection.
package retry
