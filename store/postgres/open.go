package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/grit-run/grit/store"
)

// Store is a store.Store on a PostgreSQL schema. It is safe for concurrent
// use, and any number of Stores, in any number of processes, may share one
// schema.
type Store struct {
	pool *pgxpool.Pool
	// beats is the heartbeats' own pool (lease.go): they never wait for a
	// connection behind claims, results and per-task work.
	beats *pgxpool.Pool
	// route says whether the connections go through a pooler (route.go).
	route   route
	schema  string
	channel string // NOTIFY channel of due work
	// cancelChannel is the NOTIFY channel of cancelled running tasks.
	cancelChannel string
	// pauseChannel is the NOTIFY channel of pauses and resumes.
	pauseChannel string
	sqls         sync.Map // statement template -> text with the schema filled in

	// listenOn is the connection the watchers (Wake, WatchCancels,
	// WatchPauses) listen on: the pool's when it is direct, else
	// Config.NotifyDSN's; nil when there is none (wake.go).
	listenOn *pgx.ConnConfig
	// notifyAt names it, for Connections.
	notifyAt string

	// life ends when the Store closes: it stops the watchers. mu orders
	// the start of a watcher before, or after, the end of life, and
	// guards watchers and stopListening.
	mu        sync.Mutex
	life      context.Context
	end       context.CancelFunc
	listeners sync.WaitGroup // the watchers and the listening loop
	// watchers are those listening now; stopListening ends the loop of
	// their shared connection, nil while none runs.
	watchers      map[*watcher]struct{}
	stopListening context.CancelFunc
	closeOnce     sync.Once
}

// The contract, checked by the compiler: a store.Store (with the
// capabilities store.Store embeds), and every optional capability.
// storetest.Declared keeps this list whole.
var (
	_ store.Store         = (*Store)(nil)
	_ store.Waker         = (*Store)(nil) // wake.go: LISTEN/NOTIFY, every process's writes
	_ store.CancelWatcher = (*Store)(nil) // wake.go: LISTEN/NOTIFY, every process's cancels
	_ store.PauseWatcher  = (*Store)(nil) // pause.go: LISTEN/NOTIFY, every process's pauses
	_ store.Advisor       = (*Store)(nil) // advice.go
	_ store.Overview      = (*Store)(nil) // overview.go
	_ store.PollReporter  = (*Store)(nil) // worker.go
	_ store.Backlog       = (*Store)(nil) // overview.go
	_ store.Enqueues      = (*Store)(nil) // overview.go
	_ store.Mailbox       = (*Store)(nil) // mailbox.go: the messages table
	_ store.Awaiter       = (*Store)(nil) // await.go: tasks' results and the awaits table
	_ store.Console       = (*Store)(nil) // console.go: the dashboard's reads
	_ store.Auditor       = (*Store)(nil) // audit.go: the operators' log, in the audit table
	_ store.Pauser        = (*Store)(nil) // pause.go: the pauses table
	_ store.Scheduler     = (*Store)(nil) // schedule.go: the schedules table
	_ store.Machines      = (*Store)(nil) // machine.go: the fsm_instances table
	_ store.InTx          = (*Store)(nil) // intx.go: EnqueueTx and PublishTx on a pgx.Tx given as any
	_ store.Weigher       = (*Store)(nil) // fair.go: the tenant_weights table
	_ store.Replicated    = (*Store)(nil) // replication.go: the server's WAL position
	_ store.Connector     = (*Store)(nil) // route.go: straight or through a pooler, where it listens
)

// ErrClosed is returned by Wake on a closed Store.
var ErrClosed = errors.New("postgres: store closed")

// Open opens the database a DSN names (postgres://user@host:5432/db, with
// an optional schema=NAME parameter) with the default Config, creating and
// migrating grit's schema as needed.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenConfig(ctx, Config{DSN: dsn})
}

// OpenExisting opens the database a DSN names with the default Config only
// if grit's schema is there, at the version this driver migrates to: it
// creates nothing and writes nothing, so it works on a read-only database
// or role (see store.OpenExisting).
func OpenExisting(ctx context.Context, dsn string) (*Store, error) {
	return OpenConfig(ctx, Config{DSN: dsn, Existing: true})
}

// OpenConfig connects to cfg.DSN and creates and migrates cfg.Schema as
// needed, unless cfg.Existing. It fails if the schema was migrated by a
// newer grit.
func OpenConfig(ctx context.Context, cfg Config) (*Store, error) {
	p, rt, err := cfg.connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, schema := p.pool, p.schema
	notify, err := cfg.notifyOn(ctx, pc, rt)
	if err != nil {
		return nil, err
	}
	where := describe(pc.ConnConfig)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: open %s: %w", where, err)
	}
	if cfg.Existing {
		err = checkSchema(ctx, pool, schema, where)
	} else if err = migrateSchema(ctx, pool, schema); err != nil {
		err = fmt.Errorf("postgres: open %s: %w", where, err)
	}
	var beats *pgxpool.Pool
	if err == nil {
		beats, err = beatPool(ctx, pc, p.beats)
	}
	if err != nil {
		pool.Close()
		return nil, classify(err)
	}
	life, end := context.WithCancel(context.Background())
	s := &Store{pool: pool, beats: beats, route: rt, schema: schema, life: life, end: end, watchers: map[*watcher]struct{}{},
		channel: channelOf(schema), cancelChannel: cancelChannelOf(schema), pauseChannel: pauseChannelOf(schema)}
	if notify != nil {
		s.listenOn, s.notifyAt = notify, describe(notify)
	}
	return s, nil
}

// classify marks the errors of an open that mean the server did not
// answer, or turned connections away for now (store.ErrUnreachable).
func classify(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// connection exceptions, insufficient resources (too many
		// connections), cannot_connect_now (starting up); any other answer
		// (a refused password, a missing role or database) is not for now.
		if strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "53") || pe.Code == "57P03" {
			return &store.OpenError{Kind: store.ErrUnreachable, Err: err}
		}
		if pe.Code == readOnlyTransaction {
			return &store.OpenError{Kind: store.ErrReadOnly, Err: fmt.Errorf(
				"%w: the database is read-only (a standby, or default_transaction_read_only is on): tasks can be read, not worked, until it is writable", err)}
		}
		return err
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return &store.OpenError{Kind: store.ErrUnreachable, Err: err}
	}
	return err
}

// readOnlyTransaction is SQLSTATE read_only_sql_transaction: a write on a
// standby, or in a read-only transaction.
const readOnlyTransaction = "25006"

// describe names a database for errors, without the password.
func describe(c *pgx.ConnConfig) string {
	return fmt.Sprintf("%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
}

// channelOf is the NOTIFY channel of a schema's due work.
func channelOf(schema string) string { return channelName(schema, "_due") }

// cancelChannelOf is the NOTIFY channel of a schema's cancelled running
// tasks: the payload is the task's id.
func cancelChannelOf(schema string) string { return channelName(schema, "_cancel") }

// pauseChannelOf is the NOTIFY channel of a schema's pauses and resumes.
func pauseChannelOf(schema string) string { return channelName(schema, "_pause") }

// maxChannel is the longest channel name pg_notify takes (NAMEDATALEN-1
// bytes); LISTEN cuts a longer one short, pg_notify refuses it.
const maxChannel = 63

// channelName is "grit_", the schema and suffix; for a schema so long
// that this would pass maxChannel, the schema is cut and a hash of the
// whole of it keeps two such schemas apart.
func channelName(schema, suffix string) string {
	name := "grit_" + schema + suffix
	if len(name) <= maxChannel {
		return name
	}
	sum := sha256.Sum256([]byte(schema))
	tag := "_" + hex.EncodeToString(sum[:6])
	keep := maxChannel - len("grit_") - len(suffix) - len(tag)
	cut := schema[:keep]
	for !utf8.ValidString(cut) { // not in the middle of a character
		cut = cut[:len(cut)-1]
	}
	return "grit_" + cut + tag + suffix
}

// Schema is the schema that holds the store's tables.
func (s *Store) Schema() string { return s.schema }

// Pool is the store's connection pool, for an application that wants to
// share it (to begin the transactions it passes to EnqueueTx, say).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// sql fills the schema into a statement template: "$S." stands for the
// quoted schema and a dot. Statements keep one text per template, so pgx
// prepares each once per connection.
func (s *Store) sql(tmpl string) string {
	if q, ok := s.sqls.Load(tmpl); ok {
		return q.(string)
	}
	q := strings.ReplaceAll(tmpl, "$S.", pgx.Identifier{s.schema}.Sanitize()+".")
	s.sqls.Store(tmpl, q)
	return q
}

// Now is the database's clock, to the microsecond: leases and due times
// are measured on it, never on the worker's.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := s.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("now: %w", err)
	}
	return now.UTC(), nil
}

// Close stops the Wake listeners and closes the pool, waiting for the
// connections in use to be given back. Closing again does nothing.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.end()
		s.mu.Unlock()
		s.listeners.Wait()
		s.pool.Close()
		s.beats.Close()
	})
	return nil
}
