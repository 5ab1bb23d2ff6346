package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "grit.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfigFileOrder: a flag wins over its variable, which wins over the
// config file, which wins over the default; grit config shows each
// setting's source, the file's as file NAME:LINE.
func TestConfigFileOrder(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "file.db")
	file := writeConfig(t, "# a deployment's settings\nlease: 1m\nconcurrency: 3\ndrain: 5s\nstore: sqlite:"+db+"\nretry-budget: 0.1,1,2\n")
	e := fakeEnv(map[string]string{configFlag.env: file, "GRIT_CONCURRENCY": "5"})
	s, _, err := commandSettings(t, e, "worker", "--drain", "9s")
	if err != nil {
		t.Fatal(err)
	}
	if s.lease != time.Minute || s.heartbeat != 20*time.Second || s.concurrency != 5 || s.drain != 9*time.Second || e.storeDSN != "sqlite:"+db {
		t.Errorf("settings %+v, store %s", s, e.storeDSN)
	}
	want := map[string]string{"lease": "file " + file + ":2", "concurrency": "env GRIT_CONCURRENCY", "drain": "flag --drain", "outage-tasks": "default"}
	for k, src := range want {
		if s.sources[k] != src {
			t.Errorf("%s from %q, want %q", k, s.sources[k], src)
		}
	}

	code, out, errOut := grit(t, "config", "--json", "--config", file, "--store", "sqlite:flag.db")
	var rows []configRow
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil {
		t.Fatalf("config: exit %d, %v: %s%s", code, err, out, errOut)
	}
	shown := map[string]configRow{}
	for _, r := range rows {
		shown[r.Name] = r
	}
	if r := shown["lease"]; r.Value != "1m" || r.Source != "file "+file+":2" {
		t.Errorf("lease: %+v", r)
	}
	if r := shown["heartbeat"]; r.Value != "20s" || r.Source != "default (a third of the lease)" {
		t.Errorf("heartbeat: %+v", r)
	}
	if r := shown["store"]; r.Value != "sqlite:flag.db" || r.Source != "flag --store" {
		t.Errorf("store, given by flag and file: %+v", r)
	}
	if r := shown["read-store"]; r.Source != "default" {
		t.Errorf("read-store: %+v", r)
	}

	// The file's store is the one a command opens.
	if code, out, errOut := grit(t, "migrate", "--config", file); code != 0 || !strings.Contains(out, db) {
		t.Errorf("migrate with the file's store: exit %d: %s%s", code, out, errOut)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("the file's store was not made: %v", err)
	}
}

// TestConfigFileErrors: what is wrong in a config file is a usage error
// naming the file, the line and the key, with a suggestion when a key is
// close to one grit knows; every error in the file at once.
func TestConfigFileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		says []string
	}{
		{"leese: 30s\n", []string{`grit.yaml:1: unknown key "leese" (did you mean "lease"?)`}},
		{"lease: 30s\nzzzz: 1\n", []string{`grit.yaml:2: unknown key "zzzz" (the keys are the settings grit config lists: store, read-store, notify-store, worker-id`}},
		{"lease: 30s\nlease: 1m\n", []string{"grit.yaml:2: lease is set twice (first on line 1): keep one"}},
		{"allow-exec:\n  - a\n  - b\n", []string{"grit.yaml:2: allow-exec: want one value (a string, number or duration), not a list; write a list as a, b, c"}},
		{"breaker: {cool-down: 1m}\n", []string{"grit.yaml:1: breaker: want one value", "not a mapping"}},
		{"lease:\n", []string{"grit.yaml:1: lease: no value: give one, or remove the line for the default"}},
		{"- lease\n", []string{"grit.yaml:1: want settings as KEY: VALUE lines (e.g. lease: 30s), not a list"}},
		{"lease: [1m\n", []string{"grit.yaml:1: did not find expected ',' or ']' (it is not YAML)"}},
		{"leese: 1s\nconcurency: 2\n", []string{`grit.yaml:1: unknown key "leese"`, `grit.yaml:2: unknown key "concurency" (did you mean "concurrency"?)`}},
		{"lease: soon\n", []string{`lease "soon" (file `, `grit.yaml:1): want a positive duration such as 15s`}},
		{"concurrency: 2.5\n", []string{`concurrency "2.5" (file `, `grit.yaml:1): want a positive number such as 10`}},
	}
	for _, tt := range tests {
		file := writeConfig(t, tt.body)
		code, _, errOut := grit(t, "config", "--config", file)
		for _, s := range tt.says {
			if code != exitUsage || !strings.Contains(errOut, s) {
				t.Errorf("%q: exit %d, %q; want %d saying %q", tt.body, code, errOut, exitUsage, s)
			}
		}
	}
	// A command reads the file before it starts, and one that has no
	// knobs still refuses a bad file.
	file := writeConfig(t, "leese: 30s\n")
	if code, _, errOut := grit(t, "tasks", "--config", file, "--store", tempStore(t)); code != exitUsage || !strings.Contains(errOut, `unknown key "leese"`) {
		t.Errorf("tasks with a bad file: exit %d, %s", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	if code, _, errOut := grit(t, "config", "--config", missing); code != exitUsage || !strings.Contains(errOut, "no such file") || !strings.Contains(errOut, "GRIT_CONFIG") {
		t.Errorf("a missing file: exit %d, %s", code, errOut)
	}
}

// FuzzParseConfigFile: the loader never panics; what it accepts holds
// only known keys, each with the line it was on; what it refuses names
// the file.
func FuzzParseConfigFile(f *testing.F) {
	for _, seed := range []string{
		"", "lease: 30s\nconcurrency: 4\n", "store: sqlite:grit.db\n", "leese: 1s\n", "lease: 1s\nlease: 2s\n",
		"allow-exec: [a, b]\n", "a: &x 1s\nlease: *x\n", "lease: *y\n", "? [a]\n: b\n", "- 1\n", "lease: !!binary aGk=\n",
		"---\nlease: 1s\n---\nlease: 2s\n", "{lease: 1s, drain: 2s}\n", "lease:\n", "\t", "lease: \"\\u0000\"\n",
	} {
		f.Add(seed)
	}
	keys := configKeys()
	f.Fuzz(func(t *testing.T, body string) {
		c, err := parseConfigFile("f.yaml", []byte(body))
		if err != nil {
			if !strings.Contains(err.Error(), "config f.yaml") {
				t.Errorf("%q: the error does not name the file: %v", body, err)
			}
			return
		}
		for k, v := range c.values {
			if !slices.Contains(keys, k) || v.line < 1 {
				t.Errorf("%q: accepted %q at line %d", body, k, v.line)
			}
		}
	})
}
