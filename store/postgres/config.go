package postgres

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults for the zero fields of Config and of requests.
const (
	// DefaultSchema holds grit's tables unless Config.Schema or the DSN's
	// schema parameter names another. A schema of its own keeps grit's
	// tables (tasks, runs, workers…) apart from the application's in a
	// shared database.
	DefaultSchema = "grit"
	// DefaultConnectTimeout bounds a connection attempt whose DSN sets no
	// connect_timeout.
	DefaultConnectTimeout = 10 * time.Second
)

// dsnExample is what every DSN error shows.
const dsnExample = "postgres://user@host:5432/db"

// Config configures a Store. Its zero fields mean the documented defaults;
// only DSN is required.
type Config struct {
	// DSN is a PostgreSQL URL (postgres://user:password@host:5432/db?sslmode=disable)
	// or a libpq keyword/value string (host=… dbname=…). In a URL, the
	// parameter schema=NAME chooses the schema; it is grit's, not sent to
	// the server.
	DSN string
	// Schema holds grit's tables, created on open if missing: lower-case
	// letters, digits and underscores. "" means the DSN's schema parameter,
	// else DefaultSchema.
	Schema string
	// Existing opens only a grit schema that exists at the version this
	// driver migrates to: nothing is created or migrated, and nothing
	// written, so a read-only database or role will do
	// (store.OpenExisting).
	Existing bool
	// MaxConns sizes the connection pool. 0 means the DSN's pool_max_conns,
	// else max(4, 2×GOMAXPROCS): batched claims and finishes go slower,
	// not faster, with many more connections than the machine has cores.
	MaxConns int
	// HeartbeatConns sizes the heartbeats' own pool, which a process opens
	// only when it renews leases. 0 means the DSN's heartbeat_conns
	// parameter (grit's, not sent to the server), else
	// DefaultHeartbeatConns.
	HeartbeatConns int
	// NotifyDSN is a direct connection to the same database for LISTEN,
	// when DSN goes through a connection pooler in transaction mode (whose
	// connections keep no session to listen on): the store's watchers
	// (Wake, WatchCancels, WatchPauses) share one connection there.
	// "" means DSN's own when it is direct; behind a pooler, none: the
	// watchers fail with store.ErrNoNotifications, and claimers poll.
	NotifyDSN string
}

// gritParams are the parameters of a URL DSN that are grit's, taken out
// before pgx reads it: pgx would send them to the server as settings.
var gritParams = []string{"schema", "heartbeat_conns"}

var schemaRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,53}$`)

func (c Config) validate() error {
	switch {
	case strings.TrimSpace(c.DSN) == "":
		return fmt.Errorf("postgres: no DSN (want e.g. %s)", dsnExample)
	case c.Schema != "" && !schemaRE.MatchString(c.Schema):
		return fmt.Errorf("postgres: schema %q: want lower-case letters, digits and underscores, not starting with a digit, at most 54 (e.g. grit)", c.Schema)
	case c.MaxConns < 0:
		return fmt.Errorf("postgres: negative MaxConns %d", c.MaxConns)
	case c.HeartbeatConns < 0:
		return fmt.Errorf("postgres: negative HeartbeatConns %d", c.HeartbeatConns)
	}
	return nil
}

// parsed is a Config with every default applied but those of the route
// (onRoute), which needs a connection.
type parsed struct {
	pool   *pgxpool.Config
	schema string
	beats  int // the heartbeats' pool size
}

// parse applies every default to a Config but those of the route
// (onRoute), which needs a connection.
func (c Config) parse() (parsed, error) {
	if err := c.validate(); err != nil {
		return parsed{}, err
	}
	dsn, params, err := splitDSN(c.DSN)
	if err != nil {
		return parsed{}, err
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return parsed{}, fmt.Errorf("postgres: bad DSN: %s (want e.g. %s)", parseReason(err), dsnExample)
	}
	schema := cmp.Or(c.Schema, params.Get("schema"), DefaultSchema)
	if !schemaRE.MatchString(schema) {
		return parsed{}, fmt.Errorf("postgres: schema %q in the DSN: want lower-case letters, digits and underscores, not starting with a digit, at most 54 (e.g. %s?schema=grit)", schema, dsnExample)
	}
	beats := c.HeartbeatConns
	if beats == 0 {
		if beats, err = heartbeatConns(params.Get("heartbeat_conns")); err != nil {
			return parsed{}, err
		}
	}
	// A connection attempt ends after DefaultConnectTimeout unless the DSN
	// says otherwise (connect_timeout=SECONDS): without a bound, one to a
	// host whose packets are dropped waits for the kernel to give up on
	// TCP, about two minutes, and a worker or command that opens the store
	// then says nothing for as long.
	if !strings.Contains(dsn, "connect_timeout") {
		pc.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	switch {
	case c.MaxConns > 0:
		pc.MaxConns = int32(c.MaxConns)
	case !strings.Contains(dsn, "pool_max_conns"):
		pc.MaxConns = int32(max(4, 2*runtime.GOMAXPROCS(0)))
	}
	return parsed{pool: pc, schema: schema, beats: beats}, nil
}

// heartbeatConns reads the DSN's heartbeat_conns ("" is the default).
func heartbeatConns(v string) (int, error) {
	if v == "" {
		return DefaultHeartbeatConns, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1000 {
		return 0, fmt.Errorf("postgres: bad DSN: heartbeat_conns=%s: want the size of the heartbeats' own pool, 1 to 1000 (e.g. %s?heartbeat_conns=1)", v, dsnExample)
	}
	return n, nil
}

// splitDSN takes grit's parameters (gritParams) out of a URL DSN. A
// keyword/value DSN is passed through.
func splitDSN(dsn string) (rest string, params url.Values, err error) {
	scheme, _, isURL := strings.Cut(dsn, "://")
	if !isURL {
		if !strings.Contains(dsn, "=") {
			return "", nil, fmt.Errorf("postgres: bad DSN: not a URL nor keyword=value pairs (want e.g. %s)", dsnExample)
		}
		return dsn, url.Values{}, nil
	}
	if scheme != "postgres" && scheme != "postgresql" {
		return "", nil, fmt.Errorf("postgres: bad DSN: scheme %q is not postgres:// or postgresql:// (want e.g. %s)", scheme, dsnExample)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, fmt.Errorf("postgres: bad DSN: %s (want e.g. %s)", parseReason(err), dsnExample)
	}
	q, params := u.Query(), url.Values{}
	for _, p := range gritParams {
		if q.Has(p) {
			params.Set(p, q.Get(p))
			q.Del(p)
		}
	}
	if len(params) == 0 {
		return dsn, params, nil
	}
	u.RawQuery = q.Encode()
	return u.String(), params, nil
}

// parseReason is a parse error without the DSN it quotes, which may hold a
// password.
func parseReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, "`: "); i >= 0 { // pgconn: cannot parse `dsn`: reason
		return msg[i+3:]
	}
	return msg
}

// ParseDSN checks a DSN as Open would and returns the schema it names
// (DefaultSchema when none).
func ParseDSN(dsn string) (schema string, err error) {
	p, err := Config{DSN: dsn}.parse()
	return p.schema, err
}
