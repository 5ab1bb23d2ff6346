// Package cli is the grit command line: one file per command, each with
// its own test. cmd/grit/main.go only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/grit-run/grit/store"
	_ "github.com/grit-run/grit/store/postgres" // postgres:// for a fleet
	_ "github.com/grit-run/grit/store/sqlite"   // the embedded default
)

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1 // a task did not succeed, or a command failed
	exitUsage   = 2 // a bad file, flag or argument
	exitStopped = 130
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
			fmt.Fprintln(stderr, "grit:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "grit:", err)
	return exitFailed
}

// errSilent ends a command with a code and nothing more to say.
var errSilent = errors.New("")

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "grit",
		Short:         "grit runs tasks durably: retries with backoff, timeouts, dead letters, DAGs",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: exitUsage, err: err} })
	def := e.getenv("GRIT_STORE")
	if def == "" {
		def = "sqlite:grit.db"
	}
	root.PersistentFlags().StringVar(&e.storeDSN, "store", def, "the store: sqlite:PATH or postgres://… (env GRIT_STORE)")
	root.AddCommand(newRunCmd(e), newSubmitCmd(e), newWaitCmd(e), newWorkerCmd(e), newTasksCmd(e), newTaskCmd(e),
		newDLQCmd(e), newStatusCmd(e), newMigrateCmd(e), newBenchCmd(e), newBenchWorkerCmd(e), newSimCmd(e), newBreakersCmd(e), newLimitsCmd(e),
		newServerCmd(e), newEnqueueCmd(e), newGetCmd(e), newCancelCmd(e), newConfigCmd(e), newVersionCmd(e))
	usageArgs(root)
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

// openStore opens the --store; a bad DSN is a usage error.
func (e *env) openStore(ctx context.Context) (store.Store, error) {
	st, err := store.Open(ctx, e.storeDSN)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return st, nil
}
