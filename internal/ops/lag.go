package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grit-run/grit/store"
)

// Lag is how far a read store (a replica, --read-store) is behind the
// store it stands in for.
type Lag struct {
	// Standby is whether the read store is a replica. One that is not
	// (a standby since promoted, say) takes writes of its own, and its
	// lag is only how far its log is behind the store's.
	Standby bool `json:"standby"`
	// Bytes is the write-ahead log the read store has yet to replay.
	Bytes uint64 `json:"bytes"`
	// Seconds is how old what the read store shows may be: 0 when it has
	// replayed everything, else the time since the last transaction it
	// replayed committed; -1 when it has replayed none.
	Seconds float64 `json:"seconds"`
	// Replayed is when the last transaction it replayed committed on the
	// primary (zero when none, or when it is not a standby).
	Replayed time.Time `json:"replayed_at,omitzero"`
}

// ErrNoLag is why a lag cannot be told: a store that cannot say where it
// is in its log (store.Replicated).
var ErrNoLag = errors.New("ops: the store cannot say where it is in its write-ahead log")

// ReplicaLag measures how far read is behind st: where st is in its log
// first, then where read is, so that a read store catching up meanwhile
// looks no further behind than it is.
func ReplicaLag(ctx context.Context, st, read store.Store) (Lag, error) {
	p, okP := st.(store.Replicated)
	r, okR := read.(store.Replicated)
	if !okP || !okR {
		return Lag{}, ErrNoLag
	}
	primary, err := p.WALPosition(ctx)
	if err != nil {
		return Lag{}, fmt.Errorf("the store: %w", err)
	}
	replica, err := r.WALPosition(ctx)
	if err != nil {
		return Lag{}, fmt.Errorf("the read store: %w", err)
	}
	return lagOf(primary, replica)
}

func lagOf(primary, replica store.WALPosition) (Lag, error) {
	if primary.System != replica.System {
		return Lag{}, fmt.Errorf("the read store is not a replica of the store: its database system is %s, the store's %s (point --read-store at a standby of the store's primary)",
			replica.System, primary.System)
	}
	l := Lag{Standby: replica.Standby}
	if primary.LSN > replica.LSN {
		l.Bytes = primary.LSN - replica.LSN
	}
	if replica.Standby {
		l.Replayed = replica.Replayed
	}
	switch {
	case l.Bytes == 0:
	case !l.Replayed.IsZero():
		l.Seconds = max(0, replica.Now.Sub(l.Replayed).Seconds())
	default:
		l.Seconds = -1
	}
	return l, nil
}

// String says the lag in a line, for grit status and the dashboard.
func (l Lag) String() string {
	switch {
	case !l.Standby && l.Bytes == 0:
		return "not a replica: it takes writes, level with the store"
	case !l.Standby:
		return fmt.Sprintf("not a replica: it takes writes, %s of log behind the store", bytesOf(l.Bytes))
	case l.Bytes == 0:
		return "a replica, caught up with the store"
	case l.Seconds < 0:
		return fmt.Sprintf("a replica, %s of log behind the store, no transaction replayed yet", bytesOf(l.Bytes))
	}
	return fmt.Sprintf("a replica, %s behind the store (%s of log not yet replayed)", time.Duration(l.Seconds*float64(time.Second)).Round(time.Millisecond), bytesOf(l.Bytes))
}

func bytesOf(n uint64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
