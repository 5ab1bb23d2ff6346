package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
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

	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*Store)(nil)

// Open opens the database a DSN names ("sqlite:path/to/grit.db", or a plain
// path) with the default Config, creating and migrating it as needed.
func Open(ctx context.Context, dsn string) (*Store, error) {
	path, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return OpenConfig(ctx, Config{Path: path})
}

// OpenConfig opens the database cfg.Path, creating and migrating it as
// needed.
func OpenConfig(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if dir := filepath.Dir(cfg.Path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
		}
	}
	wdb, err := openWriteDB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rdb, err := openReadDB(ctx, cfg)
	if err != nil {
		wdb.Close()
		return nil, err
	}
	w, err := newWriter(ctx, wdb, cfg)
	if err != nil {
		wdb.Close()
		rdb.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	return &Store{cfg: cfg, w: w, read: rdb, rstmts: newStmtCache(rdb)}, nil
}

// openWriteDB opens the one write connection and migrates the schema.
// synchronous=FULL makes every commit durable in WAL mode (NORMAL may lose
// the last commits on a power failure).
func openWriteDB(ctx context.Context, cfg Config) (*sql.DB, error) {
	db, err := sql.Open("sqlite", cfg.Path+"?"+pragmas(cfg,
		"journal_mode(WAL)", "synchronous(FULL)", "temp_store(MEMORY)")+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := retryBusy(ctx, cfg.BusyTimeout, func() error { return migrate(ctx, db) }); err != nil {
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

func openReadDB(ctx context.Context, cfg Config) (*sql.DB, error) {
	db, err := sql.Open("sqlite", cfg.Path+"?"+pragmas(cfg, "query_only(1)"))
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
// and closes the database. Closing again does nothing.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.w.close()
		s.rstmts.close()
		s.closeErr = errors.Join(s.w.db.Close(), s.read.Close())
	})
	return s.closeErr
}
