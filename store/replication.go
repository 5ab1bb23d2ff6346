package store

import (
	"context"
	"time"
)

// Replicated is an optional capability: where the database is in its
// write-ahead log, on a primary or on a replica that replays a primary's,
// so that a replica read in the store's place (grit status and the
// dashboard with --read-store) can say how far behind it is.
type Replicated interface {
	WALPosition(ctx context.Context) (WALPosition, error)
}

// WALPosition is where a database is in its write-ahead log.
type WALPosition struct {
	// System identifies the database system: a primary and its replicas
	// share it, another database has its own.
	System string
	// Standby is whether the database is a replica, replaying a
	// primary's log (and taking no writes).
	Standby bool
	// LSN is how far into the log it is, in bytes: a primary's current
	// position, a standby's last replayed one.
	LSN uint64
	// Replayed is when the last transaction a standby replayed committed
	// on the primary; zero on a primary, or before any.
	Replayed time.Time
	// Now is the database's clock.
	Now time.Time
}
