package postgres

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"runtime"
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
}

var schemaRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,53}$`)

func (c Config) validate() error {
	switch {
	case strings.TrimSpace(c.DSN) == "":
		return fmt.Errorf("postgres: no DSN (want e.g. %s)", dsnExample)
	case c.Schema != "" && !schemaRE.MatchString(c.Schema):
		return fmt.Errorf("postgres: schema %q: want lower-case letters, digits and underscores, not starting with a digit, at most 54 (e.g. grit)", c.Schema)
	case c.MaxConns < 0:
		return fmt.Errorf("postgres: negative MaxConns %d", c.MaxConns)
	}
	return nil
}

// parse turns a Config into the pool's configuration and the schema, with
// every default applied.
func (c Config) parse() (*pgxpool.Config, string, error) {
	if err := c.validate(); err != nil {
		return nil, "", err
	}
	dsn, dsnSchema, err := splitDSN(c.DSN)
	if err != nil {
		return nil, "", err
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("postgres: bad DSN: %s (want e.g. %s)", parseReason(err), dsnExample)
	}
	schema := c.Schema
	if schema == "" {
		schema = dsnSchema
	}
	if schema == "" {
		schema = DefaultSchema
	}
	if !schemaRE.MatchString(schema) {
		return nil, "", fmt.Errorf("postgres: schema %q in the DSN: want lower-case letters, digits and underscores, not starting with a digit, at most 54 (e.g. %s?schema=grit)", schema, dsnExample)
	}
	// Plan every execution with its own arguments: a prepared statement's
	// generic plan, made once, would keep the table sizes of that moment
	// (a queue's tables grow and shrink by the million) and guess ten rows
	// for every batch. Planning costs a fraction of a millisecond per
	// statement of a hundred tasks. The claim and plain successes, run for
	// every task, are the exception: functions whose plans are made once,
	// pinned to index lookups (functions/claim_tasks.sql).
	pc.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	// No JIT compilation, unless the DSN asks for it (jit=on): it pays off
	// for long analytical queries, and grit's are short. The server decides
	// by estimated cost, and over a large table of tasks that the
	// statistics do not yet cover (a backlog just inserted) a statement
	// that runs in a millisecond was estimated past jit_above_cost and
	// spent 50–100 ms compiling: the limits read once a second, the first
	// claim's wait for work, grit status's counts.
	if _, set := pc.ConnConfig.RuntimeParams["jit"]; !set {
		pc.ConnConfig.RuntimeParams["jit"] = "off"
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
	return pc, schema, nil
}

// splitDSN takes grit's schema parameter out of a URL DSN, which pgx would
// otherwise send to the server as a setting. A keyword/value DSN is passed
// through.
func splitDSN(dsn string) (rest, schema string, err error) {
	scheme, _, isURL := strings.Cut(dsn, "://")
	if !isURL {
		if !strings.Contains(dsn, "=") {
			return "", "", fmt.Errorf("postgres: bad DSN: not a URL nor keyword=value pairs (want e.g. %s)", dsnExample)
		}
		return dsn, "", nil
	}
	if scheme != "postgres" && scheme != "postgresql" {
		return "", "", fmt.Errorf("postgres: bad DSN: scheme %q is not postgres:// or postgresql:// (want e.g. %s)", scheme, dsnExample)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", "", fmt.Errorf("postgres: bad DSN: %s (want e.g. %s)", parseReason(err), dsnExample)
	}
	q := u.Query()
	schema = q.Get("schema")
	if !q.Has("schema") {
		return dsn, "", nil
	}
	q.Del("schema")
	u.RawQuery = q.Encode()
	return u.String(), schema, nil
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
	_, schema, err = Config{DSN: dsn}.parse()
	return schema, err
}
