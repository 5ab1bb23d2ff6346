package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// riverSQLiteSystem is River on SQLite through its riversqlite driver and
// modernc.org/sqlite: the worker client and the insert client each on a
// pool of one connection to the workload's file, as River's driver asks
// (SQLite has one writer; a second connection of the same client would
// fail with SQLITE_BUSY where River runs operations at once), with
// sqliteSettings; the completed jobs are counted on a third. River's
// tables are made with rivermigrate, through the worker's driver.
func riverSQLiteSystem(name string, t riverTuning) system {
	return system{
		name:   name,
		store:  onSQLite,
		config: t.String() + ", riversqlite on modernc.org/sqlite, one connection per client",
		open: func(ctx context.Context, e *env, path string, h handlerFunc) (queue, error) {
			return openRiverSQLite(ctx, e, path, t, h)
		},
	}
}

func openRiverSQLite(ctx context.Context, e *env, path string, t riverTuning, h handlerFunc) (*riverQueue[*sql.Tx], error) {
	var dbs []*sql.DB // the worker's, the insert client's and the count's
	release := func() {
		for _, db := range dbs {
			db.Close()
		}
	}
	for _, query := range []string{"", "", "_pragma=query_only(1)"} {
		db, err := openSQLite(ctx, path, query)
		if err != nil {
			release()
			return nil, fmt.Errorf("river: %w", err)
		}
		dbs = append(dbs, db)
	}
	return newRiver(ctx, e, riverOn[*sql.Tx]{
		worker: riversqlite.New(dbs[0]), ins: riversqlite.New(dbs[1]),
		count: func(ctx context.Context) (n int, err error) {
			err = dbs[2].QueryRowContext(ctx, countCompleted("river_job")).Scan(&n)
			return n, err
		},
		release: release,
	}, t, h)
}
