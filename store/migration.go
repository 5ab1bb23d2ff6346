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

// CheckSchema is nil when a store has applied exactly a driver's
// migrations, else an *OpenError of ErrSchemaVersion that says, of the
// store at where, what it lacks or has beyond them and what to do.
func CheckSchema(where string, applied map[int]bool, ms []Migration) error {
	newest, has := 0, 0
	for v := range applied {
		has = max(has, v)
	}
	var missing []int
	for _, m := range ms {
		newest = max(newest, m.Version)
		if !applied[m.Version] {
			missing = append(missing, m.Version)
		}
	}
	switch {
	case has > newest:
		return &OpenError{Kind: ErrSchemaVersion, Err: fmt.Errorf(
			"the grit store at %s has schema version %d, newer than this grit knows (%d): upgrade grit", where, has, newest)}
	case has >= newest && len(missing) > 0:
		return &OpenError{Kind: ErrSchemaVersion, Err: fmt.Errorf(
			"the grit store at %s lacks schema migrations %v: run grit migrate", where, missing)}
	case len(missing) > 0:
		return &OpenError{Kind: ErrSchemaVersion, Err: fmt.Errorf(
			"the grit store at %s has schema version %d, older than this grit needs (%d): run grit migrate", where, has, newest)}
	}
	return nil
}
