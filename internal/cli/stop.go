package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// untilStopped is ctx, ended also by Ctrl-C (SIGINT) or SIGTERM: the one
// set of signals that stops every grit command that runs until it is
// stopped, or waits for an end.
func untilStopped(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// stopped ends a command that a signal stopped before its end: it says
// on standard error what was left and how to go on, and exits 130.
func (e *env) stopped(format string, args ...any) error {
	fmt.Fprintf(e.stderr, "grit: stopped; "+format+"\n", args...)
	return &exitError{code: exitStopped, err: errSilent}
}
