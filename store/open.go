package store

import (
	"context"
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
)

// Register makes a driver available to Open under a DSN scheme ("sqlite",
// "postgres"). Drivers call it from init; registering a scheme twice
// panics.
func Register(scheme string, open Opener) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, dup := drivers[scheme]; dup {
		panic("store: driver registered twice: " + scheme)
	}
	drivers[scheme] = open
}

// Open opens the store a DSN names: "sqlite:path/to/grit.db" or
// "postgres://…". The driver's package must be imported.
func Open(ctx context.Context, dsn string) (Store, error) {
	scheme, _, ok := strings.Cut(dsn, ":")
	if !ok || scheme == "" {
		return nil, fmt.Errorf("store %q: want a DSN such as sqlite:grit.db or postgres://host/db", dsn)
	}
	if scheme == "postgresql" {
		scheme = "postgres"
	}
	driversMu.RLock()
	open, found := drivers[scheme]
	driversMu.RUnlock()
	if !found {
		return nil, fmt.Errorf("store %q: no driver for %q (known: %s)", dsn, scheme, strings.Join(Drivers(), ", "))
	}
	return open(ctx, dsn)
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
