package sqlite

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Defaults for the zero fields of Config and of requests.
const (
	DefaultBusyTimeout = 10 * time.Second
	DefaultMaxBatch    = 256
)

// Config configures a Store. Its zero fields mean the documented defaults;
// only Path is required.
type Config struct {
	// Path is the database file. Its directory is created if missing.
	Path string
	// Existing opens only a grit store that exists at the schema this
	// driver migrates to: no file or directory is created and no migration
	// applied (store.OpenExisting).
	Existing bool
	// Now is the store's clock; nil means time.Now. Leases and due times
	// are measured on it.
	Now func() time.Time
	// BatchWindow is how long the writer waits for more requests after the
	// first one of a batch. 0 means no wait: a batch is whatever is queued
	// when the writer is free.
	BatchWindow time.Duration
	// MaxBatch caps the requests committed in one transaction; 0 means
	// DefaultMaxBatch.
	MaxBatch int
	// BusyTimeout is how long a write waits for another process's
	// transaction; 0 means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// ReadConns sizes the pool of read connections; 0 means the number of
	// CPUs, at least 2.
	ReadConns int
}

func (c Config) validate() error {
	switch {
	case c.Path == "":
		return fmt.Errorf("sqlite: no database path (e.g. sqlite:path/to/grit.db)")
	case c.Path == ":memory:" || strings.HasPrefix(c.Path, "file::memory:"):
		return fmt.Errorf("sqlite: in-memory databases are not supported: use a file (e.g. sqlite:path/to/grit.db)")
	case strings.ContainsRune(c.Path, '?'):
		return fmt.Errorf("sqlite: path %q contains '?': options are not read from the path; give a plain file path (e.g. sqlite:path/to/grit.db)", c.Path)
	case c.BatchWindow < 0 || c.MaxBatch < 0 || c.BusyTimeout < 0 || c.ReadConns < 0:
		return fmt.Errorf("sqlite: negative BatchWindow, MaxBatch, BusyTimeout or ReadConns")
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.BusyTimeout == 0 {
		c.BusyTimeout = DefaultBusyTimeout
	}
	if c.ReadConns == 0 {
		c.ReadConns = max(2, runtime.NumCPU())
	}
	return c
}

// ParseDSN returns the file path of a SQLite DSN: "sqlite:PATH",
// "sqlite://PATH" or a plain PATH.
func ParseDSN(dsn string) (string, error) {
	path := dsn
	if scheme, rest, ok := strings.Cut(dsn, ":"); ok && isScheme(scheme) {
		if !strings.EqualFold(scheme, "sqlite") && !strings.EqualFold(scheme, "sqlite3") {
			return "", fmt.Errorf("sqlite: DSN %q is not a SQLite DSN (want sqlite:path/to/grit.db)", dsn)
		}
		path = strings.TrimPrefix(rest, "//")
	}
	if path == "" {
		return "", fmt.Errorf("sqlite: DSN %q names no file (want sqlite:path/to/grit.db)", dsn)
	}
	return path, nil
}

// isScheme reports whether s looks like a URL scheme rather than the start of
// a path (a Windows drive letter "C" is one letter, so it is not a scheme).
func isScheme(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i, r := range s {
		letter := 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
		if !letter && (i == 0 || !('0' <= r && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return true
}
