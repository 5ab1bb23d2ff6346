package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by the methods of a closed Store.
var ErrClosed = errors.New("sqlite: store closed")

// writer owns the one write connection. Requests queue on reqs; the loop
// takes what is queued, runs each request in its own savepoint and commits
// the batch in one BEGIN IMMEDIATE transaction. It drives the transaction
// with plain statements on its *sql.Conn, so that its prepared statements
// outlive each transaction.
type writer struct {
	db     *sql.DB
	conn   *sql.Conn
	stmts  *stmtCache
	now    func() time.Time
	path   string // the database's file, for the message of a full disk
	window time.Duration
	max    int
	busy   time.Duration // how long BEGIN retries a busy database
	// due is called after a commit in which a request made work due.
	due func()
	// lock is held for each transaction, from BEGIN to its end: the other
	// handles of the process on the file take turns on it (hub.write).
	lock sync.Locker

	reqs     chan *request
	quit     chan struct{} // closed by close: stop taking requests
	done     chan struct{} // closed when the loop has ended
	quitOnce sync.Once
}

type request struct {
	ctx context.Context
	fn  func(*wtx) error
	err chan error // buffered: the loop never waits for the caller
	// state is queued, then running (the writer took it) or abandoned
	// (its caller's context ended first): whichever comes first wins,
	// so that fn never runs once its caller has gone, and its caller
	// never goes while fn runs.
	state atomic.Int32
}

// A request's states.
const (
	queued int32 = iota
	running
	abandoned
)

func newWriter(ctx context.Context, db *sql.DB, cfg Config, lock sync.Locker, due func()) (*writer, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &writer{
		db:     db,
		conn:   conn,
		stmts:  newStmtCache(conn),
		now:    cfg.Now,
		path:   cfg.Path,
		window: cfg.BatchWindow,
		busy:   cfg.BusyTimeout,
		max:    cfg.MaxBatch,
		due:    due,
		lock:   lock,
		reqs:   make(chan *request, 4*cfg.MaxBatch),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go w.loop()
	return w, nil
}

// do runs fn in the writer's next transaction and returns its error, or the
// error of the commit. fn's writes are kept only if both are nil. When ctx
// ends before the writer takes fn, fn never runs and do returns ctx's
// cause; once the writer has taken it, do waits for its end and returns
// what happened (fn is short, and runs under the writer's busy timeout):
// so fn may write to the caller's variables, and a write is never kept
// that its caller was told failed.
func (w *writer) do(ctx context.Context, fn func(*wtx) error) error {
	r := &request{ctx: ctx, fn: fn, err: make(chan error, 1)}
	select {
	case <-w.quit:
		return ErrClosed
	default:
	}
	select {
	case w.reqs <- r:
	case <-w.done:
		return ErrClosed
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	select {
	case err := <-r.err:
		return err
	case <-w.done:
		select {
		case err := <-r.err:
			return err
		default:
			return ErrClosed // queued after the loop's last drain
		}
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, abandoned) {
			return context.Cause(ctx)
		}
		select { // the writer runs fn: wait for its end
		case err := <-r.err:
			return err
		case <-w.done:
			select {
			case err := <-r.err:
				return err
			default:
				return ErrClosed
			}
		}
	}
}

func (w *writer) loop() {
	defer close(w.done)
	for {
		select {
		case <-w.quit: // before any queued request
			w.drain()
			return
		default:
		}
		select {
		case r := <-w.reqs:
			w.commit(w.collect(r))
		case <-w.quit:
			w.drain()
			return
		}
	}
}

// collect adds to first whatever is queued, then waits up to the window for
// more, never past MaxBatch.
func (w *writer) collect(first *request) []*request {
	batch := w.take([]*request{first})
	if w.window <= 0 || len(batch) >= w.max {
		return batch
	}
	timer := time.NewTimer(w.window)
	defer timer.Stop()
	for len(batch) < w.max {
		select {
		case r := <-w.reqs:
			batch = append(batch, r)
		case <-timer.C:
			return batch
		}
	}
	return batch
}

// take adds the queued requests to batch without waiting.
func (w *writer) take(batch []*request) []*request {
	for len(batch) < w.max {
		select {
		case r := <-w.reqs:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// drain fails the requests still queued when the store closes.
func (w *writer) drain() {
	for {
		select {
		case r := <-w.reqs:
			r.err <- ErrClosed
		default:
			return
		}
	}
}

func (w *writer) close() {
	w.quitOnce.Do(func() { close(w.quit) })
	<-w.done
	w.stmts.close()
	w.conn.Close()
}

// commit runs a batch in one transaction. A request's own error rolls back
// its savepoint only; an error of the transaction fails every request.
func (w *writer) commit(batch []*request) {
	errs := make([]error, len(batch))
	fatal := w.run(batch, errs)
	for i, r := range batch {
		if fatal != nil && errs[i] == nil {
			errs[i] = fatal
		}
		r.err <- fullWrite(w.path, errs[i])
	}
}

func (w *writer) run(batch []*request, errs []error) error {
	ctx := context.Background() // a caller's cancellation must not end the batch
	w.lock.Lock()
	defer w.lock.Unlock()
	err := retryBusy(ctx, w.busy, func() error {
		_, err := w.conn.ExecContext(ctx, "BEGIN IMMEDIATE")
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	x := &wtx{ctx: ctx, conn: w.conn, stmts: w.stmts}
	due := false
	for i, r := range batch {
		if r.ctx.Err() != nil {
			r.state.CompareAndSwap(queued, abandoned)
		}
		if !r.state.CompareAndSwap(queued, running) {
			errs[i] = context.Cause(r.ctx)
			continue
		}
		x.now = w.now().UTC().Truncate(time.Microsecond)
		x.due = false
		var fatal error
		errs[i], fatal = x.savepoint(r.fn)
		if fatal != nil {
			w.rollback(ctx)
			return fatal
		}
		due = due || errs[i] == nil && x.due // a rolled-back request made nothing due
	}
	if _, err := w.conn.ExecContext(ctx, "COMMIT"); err != nil {
		w.rollback(ctx)
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	if due && w.due != nil {
		w.due()
	}
	return nil
}

// rollback ends a failed transaction; SQLite may have rolled it back
// already, which is not an error here.
func (w *writer) rollback(ctx context.Context) {
	w.conn.ExecContext(ctx, "ROLLBACK")
}
