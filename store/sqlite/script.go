package sqlite

import (
	"fmt"
	"strings"
)

// Script is the SQL that makes a grit store in a new SQLite database, as
// opening a new file does: every migration, recorded as applied, so that
// grit opens the result as a store at its schema. dsn is not read: a
// SQLite store has no option the SQL depends on. The SQL holds no
// transaction of its own (sqlite3 -bail FILE < SQL; or the tool's).
// grit turns the database to WAL when it first opens it.
func Script(string) (string, error) {
	ms, err := migrations()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- grit's SQLite store at schema version %d, as grit migrate makes it.\n", ms[len(ms)-1].Version)
	b.WriteString("-- Apply it to a new database file, e.g. sqlite3 -bail grit.db < FILE.\n\n")
	b.WriteString(bookkeepingSQL)
	for _, m := range ms {
		fmt.Fprintf(&b, "\n-- migrations/%04d_%s.sql\n%s\n%s", m.Version, m.Name, strings.TrimRight(m.SQL, "\n"), recordSQL(m))
	}
	return b.String(), nil
}
