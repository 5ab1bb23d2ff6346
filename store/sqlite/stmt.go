package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// preparer is a *sql.DB or a *sql.Conn.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// stmtCache keeps statements prepared. Every statement text is a constant
// or one of a few variants (lists travel as one json_each parameter, VALUES
// lists are padded to a power of two rows), so the cache stays small.
type stmtCache struct {
	db preparer
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStmtCache(db preparer) *stmtCache {
	return &stmtCache{db: db, m: make(map[string]*sql.Stmt)}
}

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.m[query] = st
	return st, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		st.Close()
		delete(c.m, q)
	}
}
