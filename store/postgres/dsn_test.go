package postgres_test

import (
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
)

func TestBadDSNSaysWhatToWrite(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"",
		"localhost:5432",
		"mysql://user@host/db",
		"postgres://user:secret@host:notaport/db",
		"postgres://user@host/db?sslmode=sometimes",
		"postgres://user@host/db?schema=Bad-Name",
	} {
		_, err := postgres.Open(t.Context(), dsn)
		if err == nil {
			t.Errorf("Open(%q) succeeded", dsn)
			continue
		}
		msg := err.Error()
		t.Logf("Open(%q): %v", dsn, err)
		if !strings.Contains(msg, "postgres://user@host:5432/db") {
			t.Errorf("Open(%q): %v; want the error to show postgres://user@host:5432/db", dsn, err)
		}
		if strings.Contains(msg, "secret") {
			t.Errorf("Open(%q): %v; the error shows the password", dsn, err)
		}
	}
}

func TestParseDSN(t *testing.T) {
	t.Parallel()
	cases := []struct{ dsn, schema string }{
		{"postgres://u@h:5432/db", postgres.DefaultSchema},
		{"postgresql://u@h/db?sslmode=disable&schema=jobs", "jobs"},
		{"host=h dbname=db", postgres.DefaultSchema},
	}
	for _, c := range cases {
		got, err := postgres.ParseDSN(c.dsn)
		if err != nil || got != c.schema {
			t.Errorf("ParseDSN(%q) = %q, %v; want %q", c.dsn, got, err, c.schema)
		}
	}
}

// TestStoreOpenFindsTheDriver opens through store.Open with both schemes,
// and gets a nil Store (not a nil *Store inside one) on failure.
func TestStoreOpenFindsTheDriver(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	for _, dsn := range []string{withSchema(schema), "postgresql" + strings.TrimPrefix(withSchema(schema), "postgres")} {
		s, err := store.Open(t.Context(), dsn)
		if err != nil {
			t.Fatalf("store.Open(%s): %v", redacted(dsn), err)
		}
		if ps, ok := s.(*postgres.Store); !ok || ps.Schema() != schema {
			t.Errorf("store.Open gave %T on schema %v, want a *postgres.Store on %s", s, ps.Schema(), schema)
		}
		s.Close()
	}
	s, err := store.Open(t.Context(), "postgres://user@host:notaport/db")
	if err == nil || s != nil {
		t.Errorf("store.Open of a bad DSN = %#v, %v; want a nil Store and an error", s, err)
	}
}

// TestNoJITUnlessAsked: the store's connections do not compile statements
// with JIT, which took 50–100 ms for statements that run in one over a large
// table the statistics did not yet cover; jit=on in the DSN turns it back on.
func TestNoJITUnlessAsked(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	// jit_above_cost=0: every statement is costly enough to compile.
	for _, c := range []struct{ params, want string }{
		{"&jit_above_cost=0", "off"},
		{"&jit_above_cost=0&jit=on", "on"},
	} {
		s, err := postgres.Open(t.Context(), withSchema(schema)+c.params)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var jit string
		var available bool
		if err := s.Pool().QueryRow(t.Context(), "SELECT current_setting('jit'), pg_jit_available()").Scan(&jit, &available); err != nil {
			t.Fatal(err)
		}
		if jit != c.want {
			t.Errorf("DSN with %s: jit is %s, want %s", c.params, jit, c.want)
		}
		var plan string
		if err := s.Pool().QueryRow(t.Context(), "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM "+schema+".tasks").Scan(&plan); err != nil {
			t.Fatal(err)
		}
		if compiled := strings.Contains(plan, `"JIT"`); compiled != (c.want == "on" && available) {
			t.Errorf("DSN with %s (JIT available: %v): compiled %v; plan %s", c.params, available, compiled, plan)
		}
	}
}
