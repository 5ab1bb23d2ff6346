package store

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one versioned schema change of a driver, read from a file
// named NNNN_name.sql.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations reads a driver's embedded migrations from dir in fsys, in
// version order, refusing misnamed files and repeated versions.
func Migrations(fsys fs.FS, dir string) ([]Migration, error) {
	files, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, f := range files {
		num, name, ok := strings.Cut(strings.TrimSuffix(path.Base(f), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name is not NNNN_name.sql", f)
		}
		body, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migration version %d appears twice", ms[i].Version)
		}
	}
	return ms, nil
}

// Scripter writes the SQL that makes a store of its driver from nothing,
// as migrating a new one would: every migration, recorded as applied, and
// whatever else the driver keeps beside them. dsn is a DSN of the driver
// whose options it honours (a PostgreSQL DSN's schema), or "" for the
// defaults; nothing is opened or connected to.
type Scripter func(dsn string) (string, error)

// RegisterScript makes a driver's Scripter available to Script under a
// DSN scheme. Drivers call it from init.
func RegisterScript(scheme string, s Scripter) {
	register(scripts, scheme, s)
}

// Script returns the SQL that makes a store of the driver scheme names
// ("sqlite", "postgres") from nothing, for dsn (see Scripter).
func Script(scheme, dsn string) (string, error) {
	if scheme == "postgresql" {
		scheme = "postgres"
	}
	driversMu.RLock()
	s, ok := scripts[scheme]
	driversMu.RUnlock()
	if !ok {
		return "", fmt.Errorf("no driver %q (known: %s)", scheme, strings.Join(Drivers(), ", "))
	}
	return s(dsn)
}

// SchemaError is the Err of an *OpenError of ErrSchemaVersion: which of a
// driver's migrations the store at Where lacks, and which versions it has
// that the driver does not know.
type SchemaError struct {
	Where   string
	Missing []Migration // the driver's migrations the store lacks
	Has     int         // the newest version the store has
	Known   int         // the newest version the driver knows
	Unknown []int       // the versions the store has that the driver does not know
}

func (e *SchemaError) Error() string {
	switch {
	case len(e.Unknown) > 0:
		return fmt.Sprintf("the grit store at %s has schema version %d, newer than this grit knows (%d): upgrade grit", e.Where, e.Has, e.Known)
	case e.Has >= e.Known:
		vs := make([]int, len(e.Missing))
		for i, m := range e.Missing {
			vs[i] = m.Version
		}
		return fmt.Sprintf("the grit store at %s lacks schema migrations %v: run grit migrate", e.Where, vs)
	}
	return fmt.Sprintf("the grit store at %s has schema version %d, older than this grit needs (%d): run grit migrate", e.Where, e.Has, e.Known)
}

// CheckSchema is nil when a store has applied exactly a driver's
// migrations, else an *OpenError of ErrSchemaVersion, whose Err is a
// *SchemaError, that says, of the store at where, what it lacks or has
// beyond them and what to do.
func CheckSchema(where string, applied map[int]bool, ms []Migration) error {
	e := &SchemaError{Where: where}
	for _, m := range ms {
		e.Known = max(e.Known, m.Version)
		if !applied[m.Version] {
			e.Missing = append(e.Missing, m)
		}
	}
	for v := range applied {
		e.Has = max(e.Has, v)
		if v > e.Known {
			e.Unknown = append(e.Unknown, v)
		}
	}
	sort.Ints(e.Unknown)
	if len(e.Missing) == 0 && len(e.Unknown) == 0 {
		return nil
	}
	return &OpenError{Kind: ErrSchemaVersion, Err: e}
}
