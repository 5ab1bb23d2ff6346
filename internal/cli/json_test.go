package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// output is what a command prints on standard output.
type output int

const (
	oneJSON   output = iota // with --json, exactly one JSON value
	ndJSON                  // with --json, a stream: one JSON value a line (NDJSON), as its help says
	servesOne               // with --json, one JSON value once it listens; then nothing until it is stopped
	nothing                 // nothing at all, and it has no --json
	notData                 // help or a shell script for people and shells, not data; it has no --json
)

// printing declares, for every command of grit's tree, what it prints on
// standard output and how TestEveryCommandPrintsJSON runs it: the one
// place that says which commands print nothing, which stream, and which
// print no data. A command the tree has and this table lacks fails the
// test: add it here, with arguments that make it do its work.
var printing = map[string]struct {
	out  output
	args func(fx *jsonFixture) []string // what follows the command's path (--json and --store are added)
	// ready, for a command that runs until it is stopped and prints
	// nothing, says from its standard error that it has started.
	ready string
	// postgres: the command needs a PostgreSQL store (a schema of its own).
	postgres bool
	why      string // for notData: what it prints instead
}{
	"grit":                       {out: notData, why: "its help"},
	"grit help":                  {out: notData, why: "help"},
	"grit completion bash":       {out: notData, why: "a shell's completion script"},
	"grit completion fish":       {out: notData, why: "a shell's completion script"},
	"grit completion powershell": {out: notData, why: "a shell's completion script"},
	"grit completion zsh":        {out: notData, why: "a shell's completion script"},
	"grit bench":                 {out: oneJSON, args: fixed("--tasks", "20", "--concurrency", "4", "--workers", "1", "--latency", "5", "--retries", "5", "--procs", "1", "--takeover=false", "--api-tasks", "0", "--remote-workers", "0", "--isolated", "0")},
	"grit bench-worker":          {out: notData, why: "the worker processes' side of grit bench's protocol (hidden)"},
	"grit " + benchChildCmd:      {out: notData, why: "the children's side of grit bench's isolated workload (hidden)"},
	"grit breakers":              {out: oneJSON},
	"grit breakers open":         {out: oneJSON, args: fixed("api")},
	"grit breakers close":        {out: oneJSON, args: fixed("api")},
	"grit breakers reset":        {out: oneJSON, args: fixed("api")},
	"grit breakers set":          {out: oneJSON, args: fixed("api", "--limit", "3")},
	"grit cancel":                {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{"2", "--server", fx.server} }},
	"grit chaos":                 {out: oneJSON, postgres: true, args: fixed("--for", "2s", "--workers", "1", "--rate", "5", "--every", "1s", "--settle", "30s")},
	"grit config":                {out: oneJSON},
	"grit dashboard":             {out: servesOne, args: fixed("--http", "127.0.0.1:0")},
	"grit dlq":                   {out: notData, why: "its help"},
	"grit dlq list":              {out: oneJSON},
	"grit dlq replay":            {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.deadLetter} }},
	"grit dlq skip":              {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.deadLetter} }},
	"grit dlq fail":              {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.deadLetter} }},
	"grit dlq items":             {out: notData, why: "its help"},
	"grit dlq items replay":      {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.item} }},
	"grit dlq items drop":        {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.item} }},
	"grit enqueue":               {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{"--kind", "email.send", "--server", fx.server} }},
	"grit fsm":                   {out: notData, why: "its help"},
	"grit fsm send":              {out: oneJSON, args: fixed("order", "order-1", "shipped")},
	"grit fsm show":              {out: oneJSON, args: fixed("order", "order-1")},
	"grit fsm list":              {out: oneJSON},
	"grit gen":                   {out: nothing, args: func(fx *jsonFixture) []string { return []string{fx.goPackage} }},
	"grit get":                   {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{"1", "--server", fx.server} }},
	"grit limits":                {out: oneJSON},
	"grit limits set":            {out: oneJSON, args: fixed("tenant", "acme", "5")},
	"grit limits weight":         {out: oneJSON, args: fixed("acme", "3")},
	"grit migrate":               {out: oneJSON},
	"grit pause":                 {out: oneJSON, args: fixed("queue", "mail")},
	"grit redrive":               {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.failedRun} }},
	"grit resume":                {out: oneJSON, args: fixed("queue", "mail")},
	"grit run":                   {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.okFile} }},
	"grit runs":                  {out: oneJSON},
	"grit schedules":             {out: oneJSON},
	"grit schedules apply":       {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.scheduleFile} }},
	"grit schedules backfill":    {out: oneJSON, args: fixed("nightly", "--from", "3h", "--to", "0s")},
	"grit schedules delete":      {out: oneJSON, args: fixed("nightly")},
	"grit schedules list":        {out: oneJSON},
	"grit schedules pause":       {out: oneJSON, args: fixed("nightly")},
	"grit schedules resume":      {out: oneJSON, args: fixed("nightly")},
	"grit schedules trigger":     {out: oneJSON, args: fixed("nightly")},
	"grit server":                {out: servesOne, args: fixed("--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")},
	"grit send":                  {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.deadLetter, "approval", `{"by":"ana"}`} }},
	"grit sim herd":              {out: oneJSON, args: fixed("--clients", "200", "--capacity", "50", "--down", "2s")},
	"grit status":                {out: oneJSON},
	"grit submit":                {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.okFile} }},
	"grit task":                  {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.deadLetter} }},
	"grit tasks":                 {out: oneJSON},
	"grit version":               {out: oneJSON},
	"grit wait":                  {out: oneJSON, args: func(fx *jsonFixture) []string { return []string{fx.okRun} }},
	"grit worker":                {out: nothing, ready: `"msg":"worker started"`, args: fixed("--log-format", "json")},
}

func fixed(args ...string) func(*jsonFixture) []string {
	return func(*jsonFixture) []string { return args }
}

// jsonFixture is a small store with something of everything for the
// commands to act on, which each command gets a copy of, and a grit
// server on a store of its own.
type jsonFixture struct {
	dsn                  string // the store; copy gives each command its own
	server               string // a grit server's address, with tasks 1 to 3 enqueued
	okFile, scheduleFile string
	goPackage            string // a Go package without directives
	okRun, failedRun     string // a run that succeeded, one that failed
	deadLetter, item     string // a DEAD_LETTER task, a quarantined item
}

// TestEveryCommandPrintsJSON walks every command of grit's tree and runs
// each that prints data with --json, with arguments that make it do its
// work on a small store: its standard output must be exactly one JSON
// value (or, for a stream declared so, one a line). Those that print
// nothing must print nothing.
func TestEveryCommandPrintsJSON(t *testing.T) {
	t.Parallel()
	root := newRoot(fakeEnv(nil))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() {
			cmds = append(cmds, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c.CommandPath()] = true
	}
	for path := range printing {
		if !seen[path] {
			t.Errorf("printing declares %q, which grit's tree does not have: remove it", path)
		}
	}
	fx := newJSONFixture(t)
	for _, c := range cmds {
		path := c.CommandPath()
		decl, ok := printing[path]
		if !ok {
			t.Errorf("%s: not in printing (json_test.go): declare what it prints and give it arguments", path)
			continue
		}
		hasJSON := c.Flag("json") != nil
		switch {
		case (decl.out == nothing || decl.out == notData) && hasJSON:
			t.Errorf("%s is declared to print no data, and it takes --json", path)
			continue
		case decl.out != nothing && decl.out != notData && !hasJSON:
			t.Errorf("%s prints data and takes no --json", path)
			continue
		case decl.out == notData:
			continue // help and scripts: for people and shells
		}
		t.Run(strings.ReplaceAll(path, " ", "_"), func(t *testing.T) {
			t.Parallel()
			dsn := fx.copy(t)
			if decl.postgres {
				dsn = pgtest.WithSchema(pgtest.NewSchema(t)) // fails under CI=true when PostgreSQL is unreachable
			}
			args := strings.Fields(path)[1:]
			if decl.args != nil {
				args = append(args, decl.args(fx)...)
			}
			args = append(args, "--store", dsn)
			if decl.out != nothing {
				args = append(args, "--json")
			}
			var out string
			switch {
			case decl.out == servesOne:
				out = runUntilSaid(t, args, nil)
			case decl.ready != "":
				out = runUntilSaid(t, args, []byte(decl.ready))
			default:
				code, o, errOut := grit(t, args...)
				if code != exitOK {
					t.Fatalf("grit %s: exit %d: %s", strings.Join(args, " "), code, errOut)
				}
				out = o
			}
			checkOutput(t, path, decl.out, out)
		})
	}
}

// checkOutput checks a command's standard output against what it is
// declared to print.
func checkOutput(t *testing.T, path string, kind output, out string) {
	t.Helper()
	switch kind {
	case nothing:
		if out != "" {
			t.Errorf("%s is declared to print nothing, and printed %q", path, out)
		}
	case ndJSON:
		for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if !json.Valid([]byte(line)) {
				t.Errorf("%s --json, line %d: %q is not one JSON value", path, i+1, line)
			}
		}
	default:
		dec := json.NewDecoder(strings.NewReader(out))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s --json printed %q: %v, want one JSON value", path, out, err)
		}
		if err := dec.Decode(&v); !errors.Is(err, io.EOF) {
			t.Errorf("%s --json printed %q: more than one JSON value (%v)", path, out, err)
		}
	}
}

// runUntilSaid runs a command that runs until it is stopped: it waits
// for its first line on standard output (ready nil) or for ready on
// standard error, stops it and returns all it printed on standard output.
func runUntilSaid(t *testing.T, args []string, ready []byte) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, args, &out, &errOut) }()
	said := func() bool {
		if ready == nil {
			return strings.Contains(out.String(), "\n")
		}
		return bytes.Contains([]byte(errOut.String()), ready)
	}
	deadline := time.After(time.Minute)
	for tick := time.NewTicker(20 * time.Millisecond); !said(); {
		select {
		case code := <-done:
			t.Fatalf("grit %s ended (exit %d) before it said it runs:\n%s\n%s", strings.Join(args, " "), code, out.String(), errOut.String())
		case <-deadline:
			t.Fatalf("grit %s did not say it runs within a minute:\n%s\n%s", strings.Join(args, " "), out.String(), errOut.String())
		case <-tick.C:
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("grit %s did not stop within a minute of its context's end", strings.Join(args, " "))
	}
	return out.String()
}

// newJSONFixture makes the fixture's store with grit's own commands.
func newJSONFixture(t *testing.T) *jsonFixture {
	t.Helper()
	dir := t.TempDir()
	fx := &jsonFixture{dsn: "sqlite:" + filepath.Join(dir, "grit.db"), goPackage: t.TempDir()}
	if err := os.WriteFile(filepath.Join(fx.goPackage, "p.go"), []byte("package p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fx.okFile = write("ok.yaml", "name: ok\ntasks:\n  a: {run: \"true\"}\n")
	failed := write("failed.yaml", "name: failed\ntasks:\n  a: {run: \"exit 2\", permanent_on_exit: [2]}\n")
	mixed := write("mixed.yaml", `name: mixed
defaults:
  retry: "10 10ms 50ms"
tasks:
  poison:
    run: |
      echo "fee rate 0" >&2
      exit 1
  load:
    run: |
      echo '{"item":{"row":4},"error":"row 4: bad date"}' >> "$GRIT_QUARANTINE_FILE"
      echo '{"seen":10}' >> "$GRIT_QUARANTINE_FILE"
    quarantine: {kind: import-row, max_share: 0.2}
`)
	fx.scheduleFile = write("schedules.yaml", "name: beat\ntasks:\n  beat: {run: \"true\"}\nschedules:\n  nightly: {task: beat, every: 1h}\n")
	must := func(wantCode int, args ...string) string {
		t.Helper()
		code, out, errOut := grit(t, append(args, "--store", fx.dsn)...)
		if code != wantCode {
			t.Fatalf("fixture: grit %s: exit %d, want %d: %s", strings.Join(args, " "), code, wantCode, errOut)
		}
		return out
	}
	fx.okRun = strconv.FormatInt(decodeSummary(t, must(exitOK, "run", "--json", fx.okFile)).Run, 10)
	fx.failedRun = strconv.FormatInt(decodeSummary(t, must(exitFailed, "run", "--json", failed)).Run, 10)
	for _, tk := range decodeSummary(t, must(exitFailed, "run", "--json", mixed)).Tasks {
		if tk.State == task.DeadLetter {
			fx.deadLetter = strconv.FormatInt(tk.ID, 10)
		}
	}
	var groups []quarantineGroup
	if err := json.Unmarshal([]byte(must(exitOK, "dlq", "list", "--json")), &groups); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if g.Quarantined && len(g.Items) > 0 {
			fx.item = strconv.FormatInt(g.Items[0].ID, 10)
		}
	}
	if fx.deadLetter == "" || fx.item == "" {
		t.Fatalf("fixture: no dead letter (%q) or no quarantined item (%q)", fx.deadLetter, fx.item)
	}
	must(exitOK, "schedules", "apply", fx.scheduleFile)
	must(exitOK, "fsm", "send", "order", "order-1", "paid")
	addr, stop := startServer(t, tempStore(t))
	t.Cleanup(func() { stop() })
	for range 3 {
		if code, _, errOut := grit(t, "enqueue", "--kind", "email.send", "--server", addr); code != 0 {
			t.Fatalf("fixture: enqueue: exit %d: %s", code, errOut)
		}
	}
	fx.server = addr
	return fx
}

// copyMu keeps two copies of the fixture's store from being made at once
// (each is a few files).
var copyMu sync.Mutex

// copy gives a command a store of its own: a copy of the fixture's.
func (fx *jsonFixture) copy(t *testing.T) string {
	t.Helper()
	copyMu.Lock()
	defer copyMu.Unlock()
	src := strings.TrimPrefix(fx.dsn, "sqlite:")
	dst := filepath.Join(t.TempDir(), "grit.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(src + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return "sqlite:" + dst
}
