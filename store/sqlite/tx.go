package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// wtx is the write transaction as a request sees it: its statements run on
// the writer's connection, inside the writer's transaction and the
// request's savepoint, and now is the time of the request.
type wtx struct {
	ctx   context.Context
	conn  *sql.Conn
	stmts *stmtCache // prepared on conn
	now   time.Time
	// due says that the request made work due (a READY task inserted, a
	// retry scheduled, a dependent promoted), so that the commit wakes
	// the store's waiters (Wake).
	due bool
}

func (x *wtx) stmt(query string) (*sql.Stmt, error) {
	return x.stmts.get(x.ctx, query)
}

func (x *wtx) exec(query string, args ...any) (sql.Result, error) {
	st, err := x.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(x.ctx, args...)
}

func (x *wtx) query(query string, args ...any) (*sql.Rows, error) {
	st, err := x.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(x.ctx, args...)
}

func (x *wtx) queryRow(query string, args ...any) *sql.Row {
	st, err := x.stmt(query)
	if err != nil {
		// Surface the prepare error through Row.Scan.
		return x.conn.QueryRowContext(x.ctx, query, args...)
	}
	return st.QueryRowContext(x.ctx, args...)
}

// savepoint runs fn in a savepoint. fnErr is fn's own error, after which the
// savepoint was rolled back; fatal means the transaction itself is broken.
func (x *wtx) savepoint(fn func(*wtx) error) (fnErr, fatal error) {
	if _, err := x.exec("SAVEPOINT request"); err != nil {
		return nil, fmt.Errorf("sqlite: savepoint: %w", err)
	}
	fnErr = protect(fn, x)
	if fnErr != nil {
		if _, err := x.exec("ROLLBACK TO request"); err != nil {
			return fnErr, fmt.Errorf("sqlite: rollback to savepoint: %w (after %w)", err, fnErr)
		}
	}
	if _, err := x.exec("RELEASE request"); err != nil {
		return fnErr, fmt.Errorf("sqlite: release savepoint: %w", err)
	}
	return fnErr, nil
}

// protect turns a panic in a request into its error, so that one bad
// request cannot take the writer, and every other caller, down with it.
func protect(fn func(*wtx) error, x *wtx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlite: panic in write: %v", p)
		}
	}()
	return fn(x)
}
