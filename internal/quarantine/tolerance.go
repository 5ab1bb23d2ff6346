package quarantine

import (
	"errors"
	"fmt"
	"sync"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// ErrTooMany is matched by the error of a task that set aside more items
// than its handler tolerates: the task fails, permanently, and its items
// stay quarantined.
var ErrTooMany = errors.New("grit: more items quarantined than the handler tolerates")

// Tolerance is how many items a task may set aside and still succeed:
// Max of them in all its attempts, or a share (MaxShare) of the items
// its attempt reported it saw. Zero: no bound. The engine judges a Go
// handler's by it, the API server a remote worker's.
type Tolerance struct {
	Max      int
	MaxShare float64
}

// Validate says what is wrong with p, if anything.
func (p Tolerance) Validate() error {
	switch {
	case p.Max < 0:
		return fmt.Errorf("quarantine max %d: give 0 (no bound) or more", p.Max)
	case p.MaxShare < 0 || p.MaxShare > 1:
		return fmt.Errorf("quarantine max share %v: give a share from 0 (no bound) to 1", p.MaxShare)
	}
	return nil
}

// Past is the error, permanent and matching ErrTooMany, of a task that
// has set aside total items, when that is more than Max; nil otherwise.
// A handler learns it as soon as it sets aside one too many.
func (p Tolerance) Past(total int) error {
	if p.Max > 0 && total > p.Max {
		return retry.Permanent(fmt.Errorf("%w: the task set aside %d items, more than the %d it tolerates (its handler's quarantine max); they stay quarantined: grit dlq list shows them", ErrTooMany, total, p.Max))
	}
	return nil
}

// Verdict is the end of a successful attempt of a task that has set
// aside total items, its attempt having reported it saw seen: Past, or
// the same past MaxShare of seen; nil when it is tolerated.
func (p Tolerance) Verdict(total, seen int) error {
	if total == 0 {
		return nil
	}
	if err := p.Past(total); err != nil {
		return err
	}
	if p.MaxShare > 0 && float64(total) > p.MaxShare*float64(seen) {
		return retry.Permanent(fmt.Errorf("%w: the task set aside %d of the %d items it reported it saw, more than the %.4g it tolerates (its handler's quarantine max share); they stay quarantined: grit dlq list shows them", ErrTooMany, total, seen, p.MaxShare))
	}
	return nil
}

// Log is what an attempt set aside, as its claimer counts it: the task's
// items in all (as the store counted them last), those the attempt
// added, the items it reported it saw, and its first item's fingerprint
// and error, for its one alert. Safe for concurrent use.
type Log struct {
	mu    sync.Mutex
	total int
	added int
	seen  int
	fp    string
	err   string
}

// Recorded notes that the store, having recorded items, counts total
// items of the task in all.
func (l *Log) Recorded(items []task.Quarantined, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.added += max(total-l.total, 0)
	l.total = total
	if l.fp == "" && len(items) > 0 {
		l.fp, l.err = items[0].Fingerprint, items[0].Error
	}
}

// Saw adds n to the items the attempt reported it saw.
func (l *Log) Saw(n int) {
	l.mu.Lock()
	l.seen += max(n, 0)
	l.mu.Unlock()
}

// Tally is what a Log holds.
type Tally struct {
	Total, Added, Seen int
	// Fingerprint and Error are the first item's.
	Fingerprint, Error string
}

// Tally reads l.
func (l *Log) Tally() Tally {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Tally{Total: l.total, Added: l.added, Seen: l.seen, Fingerprint: l.fp, Error: l.err}
}
