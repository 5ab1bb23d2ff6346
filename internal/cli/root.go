// Package cli is the grit command line: one file per command, each with
// its own test. cmd/grit/main.go only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/grit-run/grit/internal/version"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres" // postgres:// for a fleet
	_ "github.com/grit-run/grit/store/sqlite" // the embedded default
)

// Exit codes, one scheme for every command (the README's "Exit status").
const (
	exitOK     = 0
	exitFailed = 1 // work failed: a run or task did not succeed; or an error none of the others names
	// exitUsage is bad input: a file, flag or argument; a --store that is
	// malformed or names no grit store; a task that is not there or not in
	// a state the action applies to; a refused token or password.
	exitUsage = 2
	// exitUnavailable: the store or server did not answer, or the store's
	// schema is not the one this grit uses (grit migrate, or upgrade grit).
	exitUnavailable = 3
	exitStopped     = 130 // stopped by Ctrl-C or SIGTERM before the end
)

// exitError carries an exit code with the error to print.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// env is what commands read and write, so tests can run them in-process.
type env struct {
	stdout, stderr io.Writer
	stdin          io.Reader // nil: the process's
	getenv         func(string) string
	storeDSN       string
	// readDSN is the --read-store of the commands that only read ("":
	// they read the --store).
	readDSN string
	// notifyDSN is a direct connection to the store's PostgreSQL for
	// LISTEN, when storeDSN goes through a pooler ("": none).
	notifyDSN string
	logs      logFlags

	// configPath is the --config file (GRIT_CONFIG); loadConfig reads it
	// into config once.
	configPath string
	config     *configFile
	configErr  error
	configDone bool
}

// Main runs the grit command line and returns its exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, getenv: os.Getenv}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err != errSilent {
			fmt.Fprintln(stderr, "grit:", userText(ee.err))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "grit:", userText(err))
	return exitFailed
}

// errSilent ends a command with a code and nothing more to say.
var errSilent = errors.New("")

// defaultStoreDSN is the store of a command given none.
const defaultStoreDSN = "sqlite:grit.db"

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "grit",
		Short:         "grit runs tasks durably: retries with backoff, timeouts, dead letters, DAGs",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version prints what grit version does.
	var v strings.Builder
	printVersion(&v, version.Get())
	root.Version = Version
	root.SetVersionTemplate(v.String())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: exitUsage, err: err} })
	storeFlag.register(root.PersistentFlags(), &e.storeDSN, e.getenv)
	notifyStoreFlag.register(root.PersistentFlags(), &e.notifyDSN, e.getenv)
	configFlag.register(root.PersistentFlags(), &e.configPath, e.getenv)
	e.logs.register(root.PersistentFlags(), e.getenv)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := e.logs.check(); err != nil {
			return err
		}
		return e.storesFromFile(cmd.Flags())
	}
	addGroups(root, e)
	addReadStore(root, e)
	usageArgs(root)
	// An unknown command is a usage error (exit 2), with cobra's
	// suggestions: cobra's own error for it would exit 1. grit alone
	// prints its help.
	root.SuggestionsMinimumDistance = 2
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q", args[0])
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
		}
		return usageErr("%s: see grit --help", msg)
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	return root
}

// usageArgs makes a wrong number of arguments a usage error (exit 2) that
// shows how the command is called, in every command.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("%s: %w (usage: %s)", cmd.CommandPath(), err, cmd.UseLine())}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// dsnFlag is a flag that names a store, with the GRIT_* variable that
// gives it when the flag is not given.
type dsnFlag struct{ name, env, def, usage string }

var (
	// storeFlag is every command's store.
	storeFlag = dsnFlag{"store", "GRIT_STORE", defaultStoreDSN, "the store: sqlite:PATH or postgres://…"}
	// notifyStoreFlag is a direct connection to the store's database for
	// notifications, when --store goes through a connection pooler.
	notifyStoreFlag = dsnFlag{"notify-store", "GRIT_NOTIFY_STORE", "", "a direct postgres://… connection to the --store's database for notifications, " +
		"when --store goes through a connection pooler (default none: behind a pooler, claimers poll)"}
	// readStoreFlag is a replica of the store for the commands that only
	// read (readCommands) to read instead.
	readStoreFlag = dsnFlag{"read-store", "GRIT_READ_STORE", "", "a replica of the store (postgres://… of a standby) to read from instead, " +
		"sparing the primary; a replica is behind by its lag, which grit status and the dashboard show, and writes still go to --store"}
)

// readCommands are the commands that only read the store, which take
// --read-store; the dashboard's actions still go to --store.
var readCommands = []string{"status", "runs", "tasks", "task", "wait", "dlq list", "schedules", "schedules list", "fsm show", "fsm list", "dashboard"}

// register adds the flag to fs: its value goes to dst, and its default is
// its variable's value, else def.
func (f dsnFlag) register(fs *pflag.FlagSet, dst *string, getenv func(string) string) {
	def := getenv(f.env)
	if def == "" {
		def = f.def
	}
	fs.StringVar(dst, f.name, def, fmt.Sprintf("%s (env %s)", f.usage, f.env))
}

// source says where the flag's value in fs came from: the flag, its
// variable, the config file, or the default.
func (f dsnFlag) source(fs *pflag.FlagSet, getenv func(string) string, file *configFile) string {
	if fl := fs.Lookup(f.name); fl != nil && fl.Changed {
		return "flag --" + f.name
	}
	if getenv(f.env) != "" {
		return "env " + f.env
	}
	if _, src, ok := file.value(f.name); ok {
		return src
	}
	return "default"
}

// storesFromFile reads the config file, and gives the --store, and the
// --read-store of a command that has one, the file's value when neither
// the flag nor its variable gave one.
func (e *env) storesFromFile(fs *pflag.FlagSet) error {
	file, err := e.loadConfig()
	if err != nil {
		return err
	}
	for _, f := range []struct {
		flag dsnFlag
		dst  *string
	}{{storeFlag, &e.storeDSN}, {readStoreFlag, &e.readDSN}, {notifyStoreFlag, &e.notifyDSN}} {
		if fs.Lookup(f.flag.name) == nil {
			continue // a command without --read-store
		}
		if v, src, ok := file.value(f.flag.name); ok && f.flag.source(fs, e.getenv, file) == src {
			*f.dst = v
		}
	}
	return nil
}

// addReadStore gives each of readCommands under root the --read-store
// flag.
func addReadStore(root *cobra.Command, e *env) {
	for _, c := range append(root.Commands(), subcommands(root)...) {
		if slices.Contains(readCommands, strings.TrimPrefix(c.CommandPath(), root.Name()+" ")) {
			readStoreFlag.register(c.Flags(), &e.readDSN, e.getenv)
		}
	}
}

func subcommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		out = append(out, sub.Commands()...)
	}
	return out
}

// openStore opens the --store, creating and migrating it as needed: for
// the commands that put work in a store (run, submit, worker, server,
// migrate).
func (e *env) openStore(ctx context.Context) (store.Store, error) {
	return e.open(ctx, false)
}

// openExisting opens the --store only if a grit store is there at this
// grit's schema, creating and migrating nothing: for every command that
// reads a store or acts on what is in it, so that a mistyped --store makes
// no empty store, and a read-only database will do.
func (e *env) openExisting(ctx context.Context) (store.Store, error) {
	return e.open(ctx, true)
}

// open opens the --store, as store.Open does or, when existing, as
// store.OpenExisting does; with a --notify-store, the PostgreSQL store
// listens there.
func (e *env) open(ctx context.Context, existing bool) (store.Store, error) {
	var (
		st  store.Store
		err error
	)
	switch {
	case e.notifyDSN != "" && !isPostgres(e.storeDSN):
		return nil, usageErr("--notify-store (GRIT_NOTIFY_STORE) %s: it is for a postgres:// --store behind a connection pooler, and the store is %s", shownDSN(e.notifyDSN), shownDSN(e.storeDSN))
	case e.notifyDSN != "":
		st, err = postgres.OpenConfig(ctx, postgres.Config{DSN: e.storeDSN, NotifyDSN: e.notifyDSN, Existing: existing})
	case existing:
		st, err = store.OpenExisting(ctx, e.storeDSN)
	default:
		st, err = store.Open(ctx, e.storeDSN)
	}
	if err != nil {
		return nil, storeErr(err)
	}
	return st, nil
}

// openRead opens what a command that only reads reads: the --read-store
// if one is given, else the --store as openExisting does. Neither is
// created, migrated or written.
func (e *env) openRead(ctx context.Context) (store.Store, error) {
	if e.readDSN == "" {
		return e.openExisting(ctx)
	}
	st, err := store.OpenExisting(ctx, e.readDSN)
	if err != nil {
		return nil, readStoreErr(err)
	}
	return st, nil
}

// shownDSN is a DSN fit to print: without its password.
func shownDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.Opaque == "" {
		if q := u.Query(); q.Has("password") { // postgres://h/db?password=…
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.Redacted()
	}
	return passwordRE.ReplaceAllString(dsn, "${1}xxxxx") // key=value DSNs
}

var passwordRE = regexp.MustCompile(`(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// storeErr gives a store that could not be opened its exit code: 3 when
// it did not answer or has another schema, 2 for the rest (a bad DSN, no
// store there, a refused password).
func storeErr(err error) error {
	switch {
	case errors.Is(err, store.ErrUnreachable), errors.Is(err, store.ErrSchemaVersion), errors.Is(err, store.ErrFull):
		return &exitError{code: exitUnavailable, err: err}
	case errors.Is(err, store.ErrNotExist):
		return &exitError{code: exitUsage, err: fmt.Errorf("%w: create one with grit migrate, grit submit or grit worker, or check --store (GRIT_STORE)", err)}
	}
	return &exitError{code: exitUsage, err: err}
}

// readStoreErr is storeErr for the --read-store, which names no store to
// make but a replica of one.
func readStoreErr(err error) error {
	err = fmt.Errorf("read store: %w", err)
	if errors.Is(err, store.ErrNotExist) {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w: check --read-store (%s): it must name a replica of the store, with the same schema", err, readStoreFlag.env)}
	}
	return storeErr(err)
}

// The two families of commands, and the rest: a newcomer sees at once
// which open the store themselves (--store) and which talk to a grit
// server (--server, GRIT_SERVER), whose tokens and roles they go through.
var commandGroups = []struct {
	id, title string
	cmds      func(e *env) []*cobra.Command
}{
	{"work", "Run work on the store (--store):", func(e *env) []*cobra.Command {
		return []*cobra.Command{newRunCmd(e), newSubmitCmd(e), newWaitCmd(e), newWorkerCmd(e), newMigrateCmd(e)}
	}},
	{"operate", "Look and act on the store (--store):", func(e *env) []*cobra.Command {
		return []*cobra.Command{newStatusCmd(e), newRunsCmd(e), newTasksCmd(e), newTaskCmd(e), newDLQCmd(e), newRedriveCmd(e), newPauseCmd(e), newResumeCmd(e),
			newSchedulesCmd(e), newFSMCmd(e), newSendCmd(e), newBreakersCmd(e), newLimitsCmd(e), newDashboardCmd(e)}
	}},
	{"server", "Serve the API, and talk to a grit server (--server):", func(e *env) []*cobra.Command {
		return []*cobra.Command{newServerCmd(e), newEnqueueCmd(e), newGetCmd(e), newCancelCmd(e)}
	}},
	{"tools", "Tools:", func(e *env) []*cobra.Command {
		return []*cobra.Command{newConfigCmd(e), newGenCmd(e), newBenchCmd(e), newBenchWorkerCmd(e), newBenchChildCmd(), newSimCmd(e), newChaosCmd(e), newVersionCmd(e)}
	}},
}

// addGroups adds every command to root, in its group.
func addGroups(root *cobra.Command, e *env) {
	for _, g := range commandGroups {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, c := range g.cmds(e) {
			c.GroupID = g.id
			root.AddCommand(c)
		}
	}
	root.SetHelpCommandGroupID("tools")
	root.SetCompletionCommandGroupID("tools")
}
