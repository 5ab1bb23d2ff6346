package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/grit-run/grit/store"
)

// A route is how a Store's connections reach PostgreSQL: straight, or
// through a connection pooler (PgBouncer, pgcat, Odyssey, a cloud proxy)
// that may hand each transaction of one client connection to another
// server connection.
type route struct {
	pooled bool
}

// probeRoute connects once, with the DSN's own settings and none of
// grit's, and tells whether a pooler stands between grit and the server.
// The process id a connection announces at startup is the server
// backend's own when the connection is direct; a pooler must announce one
// of its own, since the backend behind it changes, and so the two differ.
// A pooler in session mode is taken for one too: grit then asks of it
// only what transaction mode allows, and loses nothing but speed.
func probeRoute(ctx context.Context, cc *pgx.ConnConfig) (route, error) {
	conn, err := pgconn.ConnectConfig(ctx, &cc.Config)
	if err != nil {
		return route{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rs, err := conn.Exec(ctx, `SELECT pg_backend_pid()`).ReadAll()
	if err != nil {
		return route{}, fmt.Errorf("ask the server its process id: %w", err)
	}
	if len(rs) != 1 || len(rs[0].Rows) != 1 {
		return route{}, errors.New("ask the server its process id: no answer")
	}
	backend, err := strconv.ParseUint(string(rs[0].Rows[0][0]), 10, 32)
	if err != nil {
		return route{}, fmt.Errorf("ask the server its process id: %w", err)
	}
	return route{pooled: uint32(backend) != conn.PID()}, nil
}

// onRoute sets what the store asks of each connection for the route.
//
// Direct, each connection is a session of its own, and the store sets it
// up at startup: statements are planned with their own arguments
// (plan_cache_mode=force_custom_plan: a prepared statement's generic plan,
// made once, would keep the table sizes of that moment, and a queue's
// tables grow and shrink by the million), and JIT is off unless the DSN
// asks for it (over a backlog the statistics do not cover yet, statements
// that run in a millisecond were estimated past jit_above_cost and spent
// 50–100 ms compiling). Statements are prepared once per connection
// (pgx's statement cache).
//
// Through a pooler, nothing may outlive a transaction, since the next one
// may run on another server connection: PgBouncer refuses startup
// parameters it does not know (plan_cache_mode, jit), and named prepared
// statements of one client collide with, or are missing for, another.
// So the store sends no startup parameter of its own and prepares nothing
// by name (QueryExecModeCacheDescribe): pgx keeps each statement's
// description on the client and sends it with the unnamed statement, in
// one round trip, with binary results as before. The unnamed statement
// is planned for its own arguments at each execution, as
// force_custom_plan asked. JIT is the server's default: Advice says so
// when it is on. A DSN that sets default_query_exec_mode keeps it (a
// PgBouncer 1.21 or later with max_prepared_statements set handles
// prepared statements itself).
func (r route) onRoute(pc *pgxpool.Config, dsn string) {
	if r.pooled {
		if !strings.Contains(dsn, "default_query_exec_mode") {
			pc.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
		}
		return
	}
	pc.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	if _, set := pc.ConnConfig.RuntimeParams["jit"]; !set {
		pc.ConnConfig.RuntimeParams["jit"] = "off"
	}
}

// connect applies every default to a Config, those of the route too: it
// connects once to find the route (probeRoute).
func (c Config) connect(ctx context.Context) (parsed, route, error) {
	p, err := c.parse()
	if err != nil {
		return parsed{}, route{}, err
	}
	r, err := probeRoute(ctx, p.pool.ConnConfig)
	if err != nil {
		return parsed{}, route{}, classify(fmt.Errorf("postgres: connect to %s: %w", describe(p.pool.ConnConfig), err))
	}
	r.onRoute(p.pool, c.DSN)
	return p, r, nil
}

// notifyOn is the connection the watchers listen on: NotifyDSN's, which
// must be direct, when it is set; else the pool's when it is direct; else
// none (nil).
func (c Config) notifyOn(ctx context.Context, pc *pgxpool.Config, r route) (*pgx.ConnConfig, error) {
	if c.NotifyDSN == "" {
		if r.pooled {
			return nil, nil
		}
		return pc.ConnConfig, nil
	}
	n, nr, err := Config{DSN: c.NotifyDSN}.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: the notify DSN: %w", err)
	}
	where := describe(n.pool.ConnConfig)
	if nr.pooled {
		return nil, fmt.Errorf("postgres: the notify DSN %s goes through a connection pooler too, where LISTEN has no session to stay on: "+
			"give the PostgreSQL server's own host and port (e.g. postgres://user@db.internal:5432/app)", where)
	}
	if got, want := n.pool.ConnConfig.Database, pc.ConnConfig.Database; got != want {
		return nil, fmt.Errorf("postgres: the notify DSN %s names database %q, the store's is %q: notifications stay in their database, so name the same one", where, got, want)
	}
	return n.pool.ConnConfig, nil
}

// Connections says how the store reaches its database (store.Connector).
func (s *Store) Connections() store.Connections {
	c := store.Connections{Pooled: s.route.pooled, Notify: s.notifyAt, Pool: int(s.pool.Config().MaxConns), Heartbeats: int(s.beats.Config().MaxConns)}
	if s.listenOn != nil {
		c.Listen = 1
	}
	return c
}
