package gate

import (
	"time"

	"github.com/grit-run/grit/store"
)

// The defaults both claimers share (the engine for Go workers, the API
// server for remote ones), and the commands and the root's Config show.
const (
	// DefaultLease is how long a claim holds a task without a heartbeat.
	DefaultLease = store.DefaultLease
	// DefaultConcurrency is how many attempts a Go worker runs at once.
	DefaultConcurrency = 10
	// DefaultPoll is the longest a claimer with nothing due sleeps before
	// it looks again when nothing woke it: how late it finds work that
	// another process enqueued when its store cannot notify it.
	DefaultPoll = time.Second
)

// Heartbeat is how often the leases of a claim of lease are renewed, when
// nothing says otherwise: a third of the lease, so that two heartbeats
// can fail before a lease expires.
func Heartbeat(lease time.Duration) time.Duration { return lease / 3 }
