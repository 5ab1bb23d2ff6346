package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// watchEvery is how often the watcher reads PRAGMA data_version while
// the file changes and someone waits on Wake: it bounds how late a worker
// hears of work that another process made due (without it, at its next
// poll, a second later by default). The read itself takes some
// microseconds (BenchmarkDataVersion: 7.5µs on a 2-core VM); what costs
// is waking an idle process at all: on that VM, 2.1% of one core at 10ms,
// 2.9% at 5ms, 0.4% at 100ms. So the watcher reads every 10ms while the
// file changes, and after each read that finds it unchanged waits twice
// as long, up to watchIdle: a busy fleet hears another process within
// 10ms, and an idle worker (an engine waits on Wake from Start to Stop)
// costs about 0.4% of a core and hears within 100ms, still ten times
// sooner than its poll. In one process, handles on the file need no
// watcher: a commit wakes them at once (hub).
const (
	watchEvery = 10 * time.Millisecond
	watchIdle  = 100 * time.Millisecond
)

// watchInterval is watchEvery, which a test may lengthen to hear the
// in-process wakes alone.
var watchInterval atomic.Int64

func init() { watchInterval.Store(int64(watchEvery)) }

// hub is what the handles of one process on one database file share: a
// commit through any of them that makes work due wakes the waiters of all
// of them at once, and one watcher, running only while someone waits,
// wakes them when data_version says another connection (another process,
// or a handle opened on the same file under another name) committed.
type hub struct {
	key  string // the file's cleaned absolute path, symlinks resolved
	refs int    // the open Stores on it; guarded by hubs.mu

	mu      sync.Mutex
	waiters map[chan struct{}]waiter
	stop    context.CancelFunc // ends the watcher; nil when none runs

	// write is held by the writer of one of the process's handles on the
	// file for each of its transactions, from BEGIN to COMMIT: the others
	// wait for it in turn, at once, rather than meet SQLite's lock and
	// its busy handler, which sleeps 1, 2, 5, 10… ms between tries and
	// made the tails of enqueue→start and retry lateness several
	// milliseconds long when a process had two handles (an application's
	// enqueueing client beside its worker). Another process still meets
	// the lock.
	write sync.Mutex
}

// waiter is a Wake call's: the Store it waits on, and what forgets its
// context.
type waiter struct {
	s       *Store
	unwatch func() bool
}

// hubs are the hubs of the open database files, by key.
var hubs = struct {
	mu sync.Mutex
	m  map[string]*hub
}{m: map[string]*hub{}}

// fileKey names a database file the same whichever path opened it: two
// relative paths, or a symbolic link and its target, meet in one hub. A
// hard link does not; its handles still hear each other through the
// watcher, a few milliseconds later.
func fileKey(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// joinHub returns the hub of the file at path, made on the first open.
func joinHub(path string) *hub {
	key := fileKey(path)
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
	h := hubs.m[key]
	if h == nil {
		h = &hub{key: key, waiters: map[chan struct{}]waiter{}}
		hubs.m[key] = h
	}
	h.refs++
	return h
}

// leave closes the channels of s's waiters and, with the last Store on
// the file, forgets the hub.
func (h *hub) leave(s *Store) {
	h.mu.Lock()
	for ch, w := range h.waiters {
		if w.s == s {
			w.unwatch()
			h.drop(ch)
		}
	}
	h.mu.Unlock()
	hubs.mu.Lock()
	defer hubs.mu.Unlock()
	if h.refs--; h.refs == 0 {
		delete(hubs.m, h.key)
	}
}

// signal wakes every waiter on the file: one waiting value stands for any
// number of signals.
func (h *hub) signal() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// drop closes a waiter's channel and, with the last waiter, ends the
// watcher. h.mu is held.
func (h *hub) drop(ch chan struct{}) {
	if _, ok := h.waiters[ch]; !ok {
		return
	}
	delete(h.waiters, ch)
	close(ch)
	if len(h.waiters) == 0 && h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// Wake makes the store a store.Waker. Its channel receives a value after
// every commit that makes work due (a READY task inserted by Enqueue,
// SubmitRun, Publish or a schedule; a retry, release or sensor's next
// look scheduled by Finish; a dependent promoted; a replay or retry by
// Act) through any Store open on the same file in this process, at once;
// and within watchEvery (10ms) of any commit by another process, which a
// watcher reading PRAGMA data_version tells, as long as someone waits. The
// watcher cannot tell what another process wrote, so a heartbeat or a
// claim there wakes too: a value is a hint to claim, not a promise of
// work. Values do not queue up. The channel is closed when ctx ends or the
// Store closes; on a closed Store, Wake returns ErrClosed.
func (s *Store) Wake(ctx context.Context) (<-chan struct{}, error) {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.isClosed() {
		return nil, ErrClosed
	}
	if ctx.Err() != nil {
		ch := make(chan struct{})
		close(ch)
		return ch, nil
	}
	if h.stop == nil {
		stop, err := s.watch()
		if err != nil {
			return nil, fmt.Errorf("sqlite: wake: %w", err)
		}
		h.stop = stop
	}
	ch := make(chan struct{}, 1)
	unwatch := context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.drop(ch)
	})
	h.waiters[ch] = waiter{s: s, unwatch: unwatch}
	return ch, nil
}

// watch starts the watcher of the file, on a read-only connection of its
// own (data_version is per connection, and a pooled connection would be
// taken from the reads), and returns what stops it.
func (s *Store) watch() (context.CancelFunc, error) {
	cfg := s.cfg
	cfg.Existing = true // never create the file: it is open already
	db, err := sql.Open("sqlite", source(cfg, pragmas(cfg, "query_only(1)")))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	// The pragma answers at once: its reads need no context to end them.
	read, err := db.Prepare("PRAGMA data_version")
	if err != nil {
		db.Close()
		return nil, err
	}
	last, err := dataVersion(read)
	if err != nil {
		db.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := s.hub
	go func() {
		defer db.Close()
		defer read.Close()
		every := time.Duration(watchInterval.Load())
		wait := every
		t := time.NewTimer(wait)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			v, err := dataVersion(read)
			if err == nil && v != last {
				last = v
				h.signal()
				wait = every
			} else {
				// Unchanged (or a failed read, the file busy or a disk
				// error, tried again then; meanwhile the worker's poll
				// still finds work): the file is quiet, read less often.
				wait = min(2*wait, max(watchIdle, every))
			}
			t.Reset(wait)
		}
	}()
	return cancel, nil
}

func dataVersion(read *sql.Stmt) (int64, error) {
	var v int64
	err := read.QueryRow().Scan(&v)
	return v, err
}
