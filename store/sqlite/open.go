package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/grit-run/grit/store"
)

// Store is a store.Store on a SQLite file. It is safe for concurrent use.
type Store struct {
	cfg    Config
	w      *writer
	read   *sql.DB
	rstmts *stmtCache

	cancels store.CancelFeed // the cancels of running tasks, for WatchCancels
	pauses  store.PauseFeed  // the pauses and resumes, for WatchPauses
	hub     *hub             // the wakes shared by the handles on the file, for Wake

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// The contract, checked by the compiler: a store.Store (with the
// capabilities store.Store embeds), and every optional capability but
// store.Advisor, store.InTx and store.Connector. storetest.Declared keeps this list whole.
var (
	_ store.Store         = (*Store)(nil)
	_ store.Waker         = (*Store)(nil) // wake.go: the handles on a file share their wakes; other processes' writes are watched
	_ store.CancelWatcher = (*Store)(nil) // act.go: the cancels made through this process's handles on the file
	_ store.PauseWatcher  = (*Store)(nil) // pause.go: the pauses made through this handle; claims read the pauses themselves
	_ store.Overview      = (*Store)(nil) // overview.go
	_ store.PollReporter  = (*Store)(nil) // worker.go
	_ store.Backlog       = (*Store)(nil) // overview.go
	_ store.Enqueues      = (*Store)(nil) // overview.go
	_ store.Mailbox       = (*Store)(nil) // mailbox.go: the messages table
	_ store.Awaiter       = (*Store)(nil) // await.go: tasks' results and the awaits table
	_ store.Console       = (*Store)(nil) // console.go: the dashboard's reads
	_ store.Auditor       = (*Store)(nil) // audit.go: the operators' log, in the audit table
	_ store.Pauser        = (*Store)(nil) // pause.go: the pauses table
	_ store.Scheduler     = (*Store)(nil) // schedule.go: the schedules table
	_ store.Machines      = (*Store)(nil) // machine.go: the fsm_instances table
	_ store.Weigher       = (*Store)(nil) // fair.go: the tenant_weights table
)

// Open opens the database a DSN names ("sqlite:path/to/grit.db", or a plain
// path) with the default Config, creating and migrating it as needed.
func Open(ctx context.Context, dsn string) (*Store, error) {
	path, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return OpenConfig(ctx, Config{Path: path})
}

// OpenExisting opens the database a DSN names with the default Config
// only if it is a grit store at the schema this driver migrates to: it
// creates no file and applies no migration (see store.OpenExisting).
func OpenExisting(ctx context.Context, dsn string) (*Store, error) {
	path, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return OpenConfig(ctx, Config{Path: path, Existing: true})
}

// OpenConfig opens the database cfg.Path, creating and migrating it as
// needed, unless cfg.Existing.
func OpenConfig(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := prepare(cfg); err != nil {
		return nil, err
	}
	wdb, rdb, err := openDBs(ctx, cfg)
	if err != nil {
		return nil, full(cfg.Path, err)
	}
	h := joinHub(cfg.Path)
	w, err := newWriter(ctx, wdb, cfg, &h.write, h.signal)
	if err != nil {
		h.leave(nil)
		wdb.Close()
		rdb.Close()
		return nil, full(cfg.Path, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err))
	}
	return &Store{cfg: cfg, w: w, read: rdb, rstmts: newStmtCache(rdb), hub: h}, nil
}

// openDBs opens the write and the read connections. An existing store's
// schema is checked first, on a read connection: the write connection
// turns WAL on, which would change a database that is not grit's.
func openDBs(ctx context.Context, cfg Config) (wdb, rdb *sql.DB, err error) {
	if !cfg.Existing {
		if wdb, err = openWriteDB(ctx, cfg); err != nil {
			return nil, nil, err
		}
		if rdb, err = openReadDB(ctx, cfg); err != nil {
			wdb.Close()
			return nil, nil, err
		}
		return wdb, rdb, nil
	}
	if rdb, err = openReadDB(ctx, cfg); err != nil {
		if isNotADB(err) {
			err = notGrit(cfg.Path)
		}
		return nil, nil, err
	}
	if err = checkSchema(ctx, rdb, cfg.Path); err == nil {
		wdb, err = openWriteDB(ctx, cfg)
	}
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return wdb, rdb, nil
}

// prepare creates the database's directory, or, for an existing store,
// checks that its file is there.
func prepare(cfg Config) error {
	if cfg.Existing {
		fi, err := os.Stat(cfg.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return &store.OpenError{Kind: store.ErrNotExist, Err: fmt.Errorf("no grit store at %s", cfg.Path)}
		case err != nil:
			return fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
		case fi.IsDir():
			return &store.OpenError{Kind: store.ErrNotExist, Err: fmt.Errorf("no grit store at %s: it is a directory", cfg.Path)}
		}
		return nil
	}
	if dir := filepath.Dir(cfg.Path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
		}
	}
	return nil
}

// source is the name sql.Open gets for the database with the query q.
// An existing store's is a file: URI with mode=rw, so that SQLite fails
// rather than create a file removed since prepare looked.
func source(cfg Config, q string) string {
	if !cfg.Existing {
		return cfg.Path + "?" + q
	}
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return "file:" + r.Replace(cfg.Path) + "?mode=rw&" + q
}

// openWriteDB opens the one write connection and migrates the schema
// (unless cfg.Existing).
// synchronous=FULL makes every commit durable in WAL mode (NORMAL may lose
// the last commits on a power failure).
func openWriteDB(ctx context.Context, cfg Config) (*sql.DB, error) {
	db, err := sql.Open("sqlite", source(cfg, pragmas(cfg,
		"journal_mode(WAL)", "synchronous(FULL)", "temp_store(MEMORY)")+"&_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	ready := func() error { return migrate(ctx, db) }
	if cfg.Existing {
		ready = func() error { return db.PingContext(ctx) }
	}
	if err := retryBusy(ctx, cfg.BusyTimeout, ready); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	return db, nil
}

// retryBusy retries fn while it fails with SQLITE_BUSY, for up to limit.
// SQLite answers BUSY without waiting for busy_timeout in a few cases that
// meet only processes opening the same new file at once (one converts it to
// WAL while another connects).
func retryBusy(ctx context.Context, limit time.Duration, fn func() error) error {
	deadline := time.Now().Add(limit)
	wait := time.Millisecond
	for {
		err := fn()
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(wait + time.Duration(rand.Int64N(int64(wait)))):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// full says so when err is the disk being full, as an *store.OpenError of
// store.ErrFull; other errors are returned as they are.
func full(path string, err error) error {
	free, dir, e := noRoom(path, err)
	if e == nil {
		return err
	}
	return &store.OpenError{Kind: store.ErrFull, Err: fmt.Errorf(
		"sqlite: open %s: the disk is full (%d bytes free in %s): free some space, or put the store elsewhere (--store) (SQLite: %w)", path, free, dir, e)}
}

// fullWrite says so when a write's err is the disk being full, wrapping
// store.ErrFull (a caller may try again once space is freed); other
// errors are returned as they are.
func fullWrite(path string, err error) error {
	free, dir, e := noRoom(path, err)
	if e == nil {
		return err
	}
	return fmt.Errorf("%w: sqlite %s: the disk is full (%d bytes free in %s): free some space, then try again (SQLite: %w)", store.ErrFull, path, free, dir, e)
}

// noRoom returns the SQLite error of err when err is the disk being full,
// with the bytes free in the store's directory: SQLite reports it as
// SQLITE_FULL, or, when the file of shared memory beside the database
// cannot grow, as an I/O error; either way the file system has no room.
func noRoom(path string, err error) (free uint64, dir string, _ *sqlite.Error) {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return 0, "", nil
	}
	code := e.Code() & 0xff
	if code != sqlite3.SQLITE_FULL && code != sqlite3.SQLITE_IOERR {
		return 0, "", nil
	}
	var fs syscall.Statfs_t
	dir = filepath.Dir(path)
	if serr := syscall.Statfs(dir, &fs); serr != nil {
		return 0, "", nil
	}
	free = fs.Bavail * uint64(fs.Bsize)
	if code == sqlite3.SQLITE_IOERR && free >= 1<<20 {
		return 0, "", nil // a real I/O error, with room to spare
	}
	return free, dir, e
}

func isNotADB(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_NOTADB
}

// notGrit is the error of an existing file that is not a grit store.
func notGrit(path string) error {
	return &store.OpenError{Kind: store.ErrNotExist, Err: fmt.Errorf("no grit store at %s: the file is not a grit database", path)}
}

func openReadDB(ctx context.Context, cfg Config) (*sql.DB, error) {
	db, err := sql.Open("sqlite", source(cfg, pragmas(cfg, "query_only(1)")))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	db.SetMaxOpenConns(cfg.ReadConns)
	db.SetMaxIdleConns(cfg.ReadConns)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	return db, nil
}

func pragmas(cfg Config, extra ...string) string {
	q := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", cfg.BusyTimeout.Milliseconds())
	for _, p := range extra {
		q += "&_pragma=" + p
	}
	return q
}

// Now is the store's clock, to the microsecond the database keeps.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	return s.cfg.Now().UTC().Truncate(time.Microsecond), nil
}

// Close stops the writer, failing the requests still queued with ErrClosed,
// closes the channels of Wake, and closes the database. Closing again does
// nothing.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true) // before leave: no Wake may join after it
		s.hub.leave(s)
		s.cancels.Close()
		s.pauses.Close()
		s.w.close()
		s.rstmts.close()
		s.closeErr = errors.Join(s.w.db.Close(), s.read.Close())
	})
	return s.closeErr
}

func (s *Store) isClosed() bool { return s.closed.Load() }
