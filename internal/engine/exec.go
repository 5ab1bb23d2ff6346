package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/grit-run/grit/internal/decide"
	"github.com/grit-run/grit/internal/proc"
	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// execHandler runs process tasks (kind "exec").
func execHandler(ctx context.Context, t *task.Task) error {
	var x task.Exec
	if err := json.Unmarshal(t.Args, &x); err != nil {
		return retry.Permanent(fmt.Errorf("exec task %d: args are not an exec spec: %w", t.ID, err))
	}
	if err := confirmLease(ctx); err != nil {
		return err // cancelled or taken over since its claim: not started
	}
	env := append(attemptEnv(ctx, t), x.Env...)
	var sf *snoozeFile
	if len(x.SnoozeOnExit) > 0 {
		var err error
		if sf, err = newSnoozeFile(); err != nil {
			return retry.Transient(fmt.Errorf("exec task %d: make its snooze file: %w", t.ID, err)) // the worker's trouble, not the task's
		}
		defer sf.remove()
		env = append(env, sf.env())
	}
	qf, err := newQuarantineFile()
	if err != nil {
		return retry.Transient(fmt.Errorf("exec task %d: %w", t.ID, err)) // the worker's trouble, not the task's
	}
	env = append(env, qf.env())
	res, err := proc.Run(ctx, proc.Spec{Argv: x.Argv, Shell: x.Shell, Env: env, Dir: x.Dir, Grace: t.Grace})
	if qerr := qf.collect(ctx, x.Quarantine); qerr != nil {
		return qerr
	}
	if err != nil {
		return retry.Permanent(err)
	}
	if rec, ok := ctx.Value(recordKey{}).(*record); ok {
		code := res.ExitCode
		rec.output, rec.exitCode, rec.signal = output(res), &code, res.Signal
	}
	switch {
	case res.TimedOut:
		return &timeoutExit{ExitError: exitError(res)}
	case res.Signal != "":
	case res.ExitCode == 0:
		return nil
	case sf != nil && slices.Contains(x.SnoozeOnExit, res.ExitCode):
		return sf.snooze(x, res.ExitCode)
	}
	return classifyExit(exitError(res), x)
}

// workerTag names, in a process task's environment, the worker that
// started it, so that a successor under its identity can end what it left
// behind; workerPIDTag holds the pid of the worker's process, so that any
// worker on the host can end the processes of a worker that is gone.
const (
	workerTag    = "GRIT_WORKER_ID"
	workerPIDTag = "GRIT_WORKER_PID"
)

// workerPID tags the process tasks this process starts.
var workerPID = workerPIDTag + "=" + strconv.Itoa(os.Getpid())

// attemptEnv tells a process which attempt it is: GRIT_TASK_ID,
// GRIT_RUN_ID, GRIT_TASK_NAME, GRIT_ATTEMPT, GRIT_SNOOZES (how many times
// it snoozed before), GRIT_LEASE_TOKEN (a fencing token for its downstream
// writes), GRIT_WORKER_ID and GRIT_WORKER_PID;
// and, when the attempt is traced, TRACEPARENT, the W3C trace context of
// its span, which OpenTelemetry SDKs in the process continue.
func attemptEnv(ctx context.Context, t *task.Task) []string {
	env := []string{
		"GRIT_TASK_ID=" + strconv.FormatInt(t.ID, 10),
		"GRIT_RUN_ID=" + strconv.FormatInt(t.RunID, 10),
		"GRIT_TASK_NAME=" + t.Name,
		"GRIT_ATTEMPT=" + strconv.Itoa(t.Attempt),
		"GRIT_SNOOZES=" + strconv.Itoa(t.Snoozes),
		workerPID,
	}
	if a, ok := AttemptFrom(ctx); ok {
		env = append(env, "GRIT_LEASE_TOKEN="+strconv.FormatInt(a.LeaseToken, 10), workerTag+"="+a.Worker)
	}
	// The attempt's own span, not whatever span the worker's context
	// carried from its start: an untraced attempt passes none on.
	if c, ok := ctx.Value(confirmKey{}).(*attemptCtx); ok && c.a != nil && c.a.span != nil {
		env = append(env, "TRACEPARENT="+tracing.Format(c.a.span.SpanContext()))
	}
	return env
}

func exitError(res proc.Result) *decide.ExitError {
	return &decide.ExitError{Code: res.ExitCode, Signal: res.Signal, Stderr: res.Stderr}
}

// timeoutExit is a process cut off by the executor.
type timeoutExit struct{ *decide.ExitError }

func (e *timeoutExit) Unwrap() error { return e.ExitError }

func classifyExit(e *decide.ExitError, x task.Exec) error {
	switch {
	case e.Code == decide.ExitTempFail || slices.Contains(x.RetryOnExit, e.Code):
		return retry.Transient(e)
	case slices.Contains(x.PermanentOnExit, e.Code):
		return retry.Permanent(e)
	case slices.Contains(x.ResourceOnExit, e.Code):
		return retry.Resource(e)
	}
	return e
}

func output(res proc.Result) string {
	var b strings.Builder
	if len(res.Stdout) > 0 {
		b.WriteString("--- stdout\n")
		b.Write(res.Stdout)
	}
	if len(res.Stderr) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("--- stderr\n")
		b.Write(res.Stderr)
	}
	return b.String()
}
