package postgres_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// withParams is a DSN with more URL parameters.
func withParams(t *testing.T, dsn string, kv ...string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for i := 0; i < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// TestOpenExistingCreatesNothing: without grit's schema, opening an
// existing store fails with ErrNotExist and creates no schema.
func TestOpenExistingCreatesNothing(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t) // named, dropped at the end, not created
	_, err := store.OpenExisting(ctx, withSchema(schema))
	if !errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), "no grit store at ") || !strings.Contains(err.Error(), "(schema "+schema+")") {
		t.Errorf("open: %v, want ErrNotExist naming the schema", err)
	}
	var n int
	admin(t).QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, schema).Scan(&n)
	if n != 0 {
		t.Errorf("schema %s was created", schema)
	}
	u, _ := url.Parse(testDSN())
	u.Path = "/grit_no_such_database"
	if _, err := postgres.OpenExisting(ctx, u.String()); errors.Is(err, store.ErrUnreachable) || !strings.Contains(err.Error(), `database "grit_no_such_database" does not exist`) {
		t.Errorf("open of a database that does not exist: %v, want it said, not ErrUnreachable", err)
	}
}

func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	for _, open := range []func(string) error{
		func(dsn string) error { _, err := postgres.Open(bounded(t), dsn); return err },
		func(dsn string) error { _, err := postgres.OpenExisting(bounded(t), dsn); return err },
	} {
		if err := open("postgres://grit@127.0.0.1:1/x"); !errors.Is(err, store.ErrUnreachable) || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("open of a closed port: %v, want ErrUnreachable saying where", err)
		}
	}
}

// TestOpenExistingReadOnly: a store opened as existing reads through a
// read-only session and a role that may only SELECT, where opening it to
// migrate fails.
func TestOpenExistingReadOnly(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t)
	s := openIn(t, schema)
	ts, err := s.Enqueue(ctx, []task.NewTask{{Kind: "k", Args: []byte(`{"n":1}`)}})
	if err != nil {
		t.Fatal(err)
	}
	// A password, so that the role logs in where the server asks for one.
	role, password := fmt.Sprintf("grit_ro_%08x", rand.Uint32()), fmt.Sprintf("pw%016x", rand.Uint64())
	db := admin(t)
	if _, err := db.Exec(ctx, `CREATE ROLE `+role+` LOGIN PASSWORD '`+password+`'`); err != nil {
		t.Fatalf("create a role to read with (the test user needs CREATEROLE): %v", err)
	}
	t.Cleanup(func() {
		db.Exec(t.Context(), `DROP OWNED BY `+role)
		db.Exec(t.Context(), `DROP ROLE `+role)
	})
	for _, q := range []string{
		`GRANT USAGE ON SCHEMA ` + schema + ` TO ` + role,
		`GRANT SELECT ON ALL TABLES IN SCHEMA ` + schema + ` TO ` + role,
	} {
		if _, err := db.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	readOnly := withParams(t, withSchema(schema), "default_transaction_read_only", "on")
	u, _ := url.Parse(withSchema(schema))
	u.User = url.UserPassword(role, password)
	selectOnly := u.String()
	for name, dsn := range map[string]string{"read-only session": readOnly, "SELECT-only role": selectOnly} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := bounded(t) // its own: a parallel subtest may wait long for its turn
			if s, err := postgres.Open(ctx, dsn); err == nil {
				s.Close()
				t.Errorf("open to migrate succeeded: the session is not read-only")
			}
			ro, err := store.OpenExisting(ctx, dsn)
			if err != nil {
				t.Fatalf("open existing: %v", err)
			}
			defer ro.Close()
			got, err := ro.GetTask(ctx, ts[0].ID)
			if err != nil || got.Kind != "k" {
				t.Errorf("get: %+v, %v", got, err)
			}
			if list, err := ro.ListTasks(ctx, task.Filter{}); err != nil || len(list) != 1 {
				t.Errorf("list: %d tasks, %v", len(list), err)
			}
		})
	}
}

// TestOpenExistingChecksTheSchema: a schema that lacks a migration, or
// has one this grit does not know, is refused and left as it is.
func TestOpenExistingChecksTheSchema(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t)
	openIn(t, schema)
	db := admin(t)
	tests := []struct {
		name, change, undo, says string
	}{
		{"older", `DELETE FROM ` + schema + `.schema_migrations WHERE version = 1`,
			`INSERT INTO ` + schema + `.schema_migrations (version, name) VALUES (1, 'init')`, "lacks schema migrations [1]: run grit migrate"},
		{"newer", `INSERT INTO ` + schema + `.schema_migrations (version, name) VALUES (9999, 'future')`,
			`DELETE FROM ` + schema + `.schema_migrations WHERE version = 9999`, "has schema version 9999, newer than this grit knows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := db.Exec(ctx, tt.change); err != nil {
				t.Fatal(err)
			}
			defer db.Exec(ctx, tt.undo)
			_, err := postgres.OpenExisting(ctx, withSchema(schema))
			if !errors.Is(err, store.ErrSchemaVersion) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("open: %v, want ErrSchemaVersion saying %q", err, tt.says)
			}
		})
	}
	s, err := postgres.OpenExisting(ctx, withSchema(schema))
	if err != nil {
		t.Fatalf("open of an up-to-date schema: %v", err)
	}
	s.Close()
}
