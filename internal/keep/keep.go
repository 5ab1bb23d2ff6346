// Package keep holds the one rule by which the dashboard and the metrics
// keep a reading of the store that reads many tasks (the counts by queue
// and state, an hour of attempts): how long before it is read again.
package keep

import "time"

// Most is the longest a reading is kept whatever it took, unless the
// caller's floor is longer.
const Most = time.Minute

// For is how long a reading that took took is kept: twenty times what it
// took, so that reading it again costs the store at most a twentieth of
// its time while someone looks, but no longer than Most, and no shorter
// than floor (how fresh the caller needs it anyway).
func For(took, floor time.Duration) time.Duration {
	return max(floor, min(20*took, Most))
}
