package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Opener opens a store from a DSN.
type Opener func(ctx context.Context, dsn string) (Store, error)

var (
	driversMu sync.RWMutex
	drivers   = map[string]Opener{}
	existing  = map[string]Opener{}
	scripts   = map[string]Scripter{}
)

// Why a store could not be opened, for errors.Is on an *OpenError.
var (
	// ErrNotExist: OpenExisting found no grit store where the DSN points
	// (no file, no schema, no database).
	ErrNotExist = errors.New("store: no grit store")
	// ErrSchemaVersion: the store's schema lacks migrations this grit
	// needs (run grit migrate) or has some it does not know (upgrade grit).
	ErrSchemaVersion = errors.New("store: schema version mismatch")
	// ErrUnreachable: the store's server did not answer (down, unreachable,
	// refusing connections).
	ErrUnreachable = errors.New("store: unreachable")
	// ErrFull: the store's disk has no room: an embedded store's file
	// system is full, at start or on a write. A write refused for it may
	// succeed once space is freed.
	ErrFull = errors.New("store: disk full")
	// ErrReadOnly: the store can be read but not written (a standby, a
	// database or role that is read-only): it can be looked at, and no
	// task can be worked until it is writable again.
	ErrReadOnly = errors.New("store: read-only")
)

// OpenError is a failure to open a store that a caller may act on: Kind
// is ErrNotExist, ErrSchemaVersion, ErrUnreachable, ErrFull or ErrReadOnly, which errors.Is
// matches; the message is Err's, which says where and what to do.
type OpenError struct {
	Kind error
	Err  error
}

func (e *OpenError) Error() string        { return e.Err.Error() }
func (e *OpenError) Unwrap() error        { return e.Err }
func (e *OpenError) Is(target error) bool { return target == e.Kind }

// Register makes a driver available to Open under a DSN scheme ("sqlite",
// "postgres"). Drivers call it from init; registering a scheme twice
// panics.
func Register(scheme string, open Opener) {
	register(drivers, scheme, open)
}

// RegisterExisting makes a driver's opener of existing stores available to
// OpenExisting under a DSN scheme. It must create nothing and change no
// schema, and fail with an *OpenError of ErrNotExist when there is no
// store and of ErrSchemaVersion when its schema is not the one the driver
// migrates to.
func RegisterExisting(scheme string, open Opener) {
	register(existing, scheme, open)
}

func register[T any](m map[string]T, scheme string, v T) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, dup := m[scheme]; dup {
		panic("store: driver registered twice: " + scheme)
	}
	m[scheme] = v
}

// Open opens the store a DSN names: "sqlite:path/to/grit.db" or
// "postgres://…", creating it and migrating its schema as needed. The
// driver's package must be imported.
func Open(ctx context.Context, dsn string) (Store, error) {
	open, err := lookup(drivers, dsn)
	if err != nil {
		return nil, err
	}
	return open(ctx, dsn)
}

// OpenExisting opens the store a DSN names only if it exists with the
// schema its driver migrates to. It creates nothing and migrates nothing,
// so that a mistyped DSN makes no empty store and a read-only database
// serves the commands that only read. Its errors are *OpenError when
// there is no store (ErrNotExist), its schema differs (ErrSchemaVersion)
// or its server does not answer (ErrUnreachable).
func OpenExisting(ctx context.Context, dsn string) (Store, error) {
	open, err := lookup(existing, dsn)
	if err != nil {
		return nil, err
	}
	return open(ctx, dsn)
}

// Scheme is the driver a DSN names: its scheme, postgresql read as
// postgres.
func Scheme(dsn string) (string, error) {
	scheme, _, ok := strings.Cut(dsn, ":")
	if !ok || scheme == "" {
		return "", fmt.Errorf("store %q: want a DSN such as sqlite:grit.db or postgres://host/db", dsn)
	}
	if scheme == "postgresql" {
		scheme = "postgres"
	}
	return scheme, nil
}

func lookup(m map[string]Opener, dsn string) (Opener, error) {
	scheme, err := Scheme(dsn)
	if err != nil {
		return nil, err
	}
	driversMu.RLock()
	open, found := m[scheme]
	_, creates := drivers[scheme]
	driversMu.RUnlock()
	if !found {
		if creates {
			return nil, fmt.Errorf("store %q: the %q driver cannot open an existing store without creating it", dsn, scheme)
		}
		return nil, fmt.Errorf("store %q: no driver for %q (known: %s)", dsn, scheme, strings.Join(Drivers(), ", "))
	}
	return open, nil
}

// Drivers lists the registered schemes.
func Drivers() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	names := make([]string, 0, len(drivers))
	for k := range drivers {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
