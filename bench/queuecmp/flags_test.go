package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

func TestBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"--systems", "grit,sidekiq"}, `unknown system "sidekiq"`},
		{[]string{"--systems", "grit,grit"}, `"grit" is listed twice`},
		{[]string{"--systems", ""}, "empty system name"},
		{[]string{"--systems", "grit,"}, "empty system name"},
		{[]string{"--jobs", "0"}, "--jobs 0: want a positive number"},
		{[]string{"--latency-jobs", "-5"}, "--latency-jobs -5: want a positive number"},
		{[]string{"--retry-jobs", "0"}, "--retry-jobs 0: want a positive number"},
		{[]string{"--rounds", "0"}, "--rounds 0: want at least one run"},
		{[]string{"--backlog", "-1"}, "--backlog -1: want a number of jobs, or 0 for none"},
		{[]string{"--future", "-3"}, "--future -3: want a number of jobs, or 0 for none"},
		{[]string{"--jobs", "many"}, `invalid value "many"`},
		{[]string{"--frobnicate"}, "flag provided but not defined"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--db", "host=localhost dbname=test"}, "--db: want a PostgreSQL URL"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), c.args, &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), c.want)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

func TestFlagDefaults(t *testing.T) {
	t.Setenv("GRIT_TEST_POSTGRES", "")
	o, err := parseFlags(nil, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range o.systems {
		names = append(names, s.name)
	}
	want := []string{"river-defaults", "river-tuned", "grit", "grit-defaults", "grit-features", "grit-tenants", "pg-limit", "grit-sqlite", "grit-sqlite-tenants", "river-sqlite", "sqlite-limit"}
	if !slices.Equal(names, want) || o.jobs != 20000 || o.rounds != 3 || o.latencyJobs != 2000 || o.retryJobs != 500 || o.db != defaultDSN || o.json || o.backlog != 0 || o.future != 0 {
		t.Errorf("defaults %+v (systems %v)", o, names)
	}
}

func TestSystemsKeepOrder(t *testing.T) {
	o, err := parseFlags([]string{"--systems", " grit-defaults, sqlite-limit,river-tuned "}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range o.systems {
		names = append(names, s.name)
	}
	if want := []string{"grit-defaults", "sqlite-limit", "river-tuned"}; !slices.Equal(names, want) {
		t.Errorf("systems %v, want %v", names, want)
	}
}

// TestEachSystemsStore: the SQLite systems are the three whose names say
// so, and each store has a grit system and others to compare it with.
func TestEachSystemsStore(t *testing.T) {
	grits := map[storeKind]int{}
	others := map[storeKind]int{}
	for _, s := range systems {
		if (s.store == onSQLite) != strings.Contains(s.name, "sqlite") {
			t.Errorf("%s runs on %s", s.name, s.store)
		}
		if s.grit {
			grits[s.store]++
		} else {
			others[s.store]++
		}
	}
	for _, st := range []storeKind{onPostgres, onSQLite} {
		if grits[st] == 0 || others[st] == 0 {
			t.Errorf("%s: %d grit systems and %d others", st, grits[st], others[st])
		}
	}
}
