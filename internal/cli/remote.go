package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/grit-run/grit/api/client"
	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/task"
)

// remote dials the server that --server (or GRIT_SERVER) names, with the
// client's GRIT_* settings and GRIT_TOKEN; remoteErr(cfg, err) gives a
// failed call its exit code and message.
func (e *env) remote(server string) (c *client.Client, cfg client.Config, err error) {
	cfg, _, err = client.FromEnv(e.getenv)
	if err != nil {
		return nil, cfg, &exitError{code: exitUsage, err: err}
	}
	if server != "" {
		cfg.Addr = server
	}
	c, err = client.Dial(cfg)
	if err != nil {
		return nil, cfg, &exitError{code: exitUsage, err: err}
	}
	return c, cfg, nil
}

// remoteErr is the exit of a call to the server cfg dials that failed: 2
// for what the caller can fix (a bad request, a refused token, a task not
// there or in another state, TLS on one side only), 3 for a server that
// did not answer, 1 for the rest. It says what the server said, without
// the transport's wording.
func remoteErr(cfg client.Config, err error) error {
	said := plainRemote(remoteMessage(err))
	switch client.Code(err) {
	case codes.AlreadyExists:
		if client.Reason(err) == pb.ReasonIdempotencyKeyConflict {
			return &exitError{code: exitUsage, err: keyConflict(client.ErrorInfo(err).GetMetadata())}
		}
		return &exitError{code: exitUsage, err: errors.New(said)}
	case codes.Unauthenticated, codes.PermissionDenied:
		return &exitError{code: exitUsage, err: refusedToken(cfg.Addr, client.Reason(err), said)}
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition:
		return &exitError{code: exitUsage, err: errors.New(said)}
	case codes.Unavailable, codes.DeadlineExceeded:
		if client.Reason(err) == pb.ReasonStoreFull {
			return &exitError{code: exitUnavailable, err: errors.New(said)} // the server answered: its store's disk is full
		}
		if why := unanswered(cfg); why != nil {
			return why
		}
		return &exitError{code: exitUnavailable, err: fmt.Errorf("the server at %s did not answer: %s", cfg.Addr, said)}
	}
	return &exitError{code: exitFailed, err: errors.New(said)}
}

// remoteMessage is what the server (or the transport) said of a failed
// call, without the wrapping of the layers it went through.
func remoteMessage(err error) string {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Message()
	}
	return err.Error()
}

// refusedToken says, for a call the server refused for its token, what
// to set: the server's own words speak of headers and methods, a user of
// grit sets GRIT_TOKEN.
func refusedToken(addr, reason, said string) error {
	switch reason {
	case pb.ReasonTokenMissing:
		return fmt.Errorf("the server at %s needs a token: set GRIT_TOKEN to one of those it accepts (its GRIT_TOKENS or tokens file)", addr)
	case pb.ReasonTokenUnknown, pb.ReasonTokenMalformed:
		return fmt.Errorf("the server at %s does not accept the token in GRIT_TOKEN: check it against the server's GRIT_TOKENS or tokens file", addr)
	case pb.ReasonTokenReadOnly:
		return fmt.Errorf("the token in GRIT_TOKEN is read-only on the server at %s: set GRIT_TOKEN to an operator's token to change anything", addr)
	}
	if _, rest, ok := strings.Cut(said, ": "); ok && strings.HasPrefix(said, "/") {
		said = rest // the method's name, which the user did not call by name
	}
	return errors.New(said)
}

// keyConflict says, from an IDEMPOTENCY_KEY_CONFLICT's metadata, which
// task holds the key and what to do.
func keyConflict(m map[string]string) error {
	return fmt.Errorf("enqueue: the key %q already names task %s, of kind %s, which is other work (another %s): give this work another --key, or add --return-existing to get task %s",
		m["key"], m["existing_task_id"], m["existing_kind"], m["differs"], m["existing_task_id"])
}

func serverFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "server", "", "the grit server's host:port (env GRIT_SERVER, default 127.0.0.1:7420); the token is GRIT_TOKEN")
}

func newEnqueueCmd(e *env) *cobra.Command {
	var server, args, runAt string
	var asJSON bool
	t := &pb.NewTask{}
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "enqueue --kind KIND [--args JSON|@FILE|@-] [--key KEY]",
		Short: "enqueue a task through a grit server; print its id (the same id again for a repeated --key)",
		Long: `Enqueue a task through a grit server and print its id.

With --key, enqueueing the same work (kind and args) again prints the id of
the task that holds the key, and says on standard error that it existed;
other work under a key already taken is refused (exit 2, ALREADY_EXISTS,
naming the task that holds it) unless --return-existing. With --json the
task is printed as every command prints tasks, with "existed": true or
false.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if t.Kind == "" {
				return usageErr("enqueue: --kind is required (the handler that works the task, e.g. email.send)")
			}
			raw, err := e.readArgs(args)
			if err != nil {
				return err
			}
			t.Args = raw
			if err := setEnqueueTiming(t, timeout, runAt); err != nil {
				return err
			}
			return e.enqueueRemote(cmd.Context(), server, t, asJSON)
		},
	}
	serverFlag(cmd, &server)
	f := cmd.Flags()
	addNewTaskFlags(f, t)
	f.StringVar(&args, "args", "", "the task's arguments: JSON, @FILE to read it from a file, @- from standard input")
	f.Var((*timeoutFlag)(&timeout), "timeout", "cut each attempt off after this long; auto: a timeout learned from the kind's successful runs")
	f.StringVar(&runAt, "run-at", "", "when the task is due (RFC 3339), instead of now")
	f.BoolVar(&asJSON, "json", false, "print the task as JSON")
	return cmd
}

// addNewTaskFlags adds grit enqueue's flags that set a field of t as they
// are given.
func addNewTaskFlags(f *pflag.FlagSet, t *pb.NewTask) {
	f.StringVar(&t.Kind, "kind", "", "the task's kind (required)")
	f.StringVar(&t.IdempotencyKey, "key", "", "an idempotency key: the same work with it again answers the same task; other work with it is refused")
	f.BoolVar(&t.ReturnExisting, "return-existing", false, "with --key: answer the task that holds the key even when it is other work")
	f.StringVar(&t.Queue, "queue", "", "the queue (default \"default\")")
	f.StringVar(&t.Group, "group", "", "the downstream the task calls")
	f.StringVar(&t.Tenant, "tenant", "", "whose work it is, for per-tenant limits")
	f.Int64Var(&t.Priority, "priority", 0, "higher runs first")
	f.StringVar(&t.Policy, "policy", "", `the retry policy, e.g. "4 1s 1m"`)
}

// setEnqueueTiming sets t's timeout and due time from grit enqueue's
// --timeout and --run-at.
func setEnqueueTiming(t *pb.NewTask, timeout time.Duration, runAt string) error {
	if p := task.TimeoutProblem(timeout); p != "" {
		return usageErr("enqueue: --timeout %s", p)
	}
	switch {
	case timeout == task.AutoTimeout:
		t.AutoTimeout = true
	case timeout > 0:
		t.Timeout = durationpb.New(timeout)
	}
	if runAt != "" {
		at, err := time.Parse(time.RFC3339, runAt)
		if err != nil {
			return usageErr("enqueue: --run-at %q: want a time such as 2026-01-02T15:04:05Z", runAt)
		}
		if p := task.DueProblem(at, time.Now()); p != "" {
			return usageErr("enqueue: --run-at %s", p)
		}
		t.RunAt = timestamppb.New(at)
	}
	return nil
}

// readArgs reads --args: JSON as given, @FILE, or @- for standard input.
func (e *env) readArgs(v string) ([]byte, error) {
	var raw []byte
	switch {
	case v == "@-":
		b, err := io.ReadAll(e.in())
		if err != nil {
			return nil, usageErr("enqueue: --args @-: %v", err)
		}
		raw = b
	case strings.HasPrefix(v, "@"):
		b, err := os.ReadFile(v[1:])
		if err != nil {
			return nil, usageErr("enqueue: --args %s: %v", v, err)
		}
		raw = b
	default:
		raw = []byte(v)
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, usageErr("enqueue: --args %s: not JSON (e.g. --args '{\"to\": \"a@example.com\"}')", shorten(v))
	}
	return raw, nil
}

func shorten(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q…", s[:60])
	}
	return fmt.Sprintf("%q", s)
}

func (e *env) in() io.Reader {
	if e.stdin != nil {
		return e.stdin
	}
	return os.Stdin
}

func (e *env) enqueueRemote(ctx context.Context, server string, t *pb.NewTask, asJSON bool) error {
	c, cfg, err := e.remote(server)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	got, err := c.Enqueue(ctx, t)
	if err != nil {
		return remoteErr(cfg, err)
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(enqueuedJSON{taskView(fromPB(got.Task)), got.Existed})
	}
	fmt.Fprintln(e.stdout, got.Task.GetId())
	if got.Existed {
		fmt.Fprintf(e.stderr, "enqueue: task %d existed already: it holds the key %q; nothing was enqueued\n", got.Task.GetId(), got.Task.GetIdempotencyKey())
	}
	return nil
}

// enqueuedJSON is what grit enqueue --json prints: the task as every
// command prints it, and whether it existed already.
type enqueuedJSON struct {
	taskJSON
	Existed bool `json:"existed"`
}

// printRemote prints a task a server sent: as every command's task JSON
// with --json, else as text does.
func (e *env) printRemote(t *pb.Task, asJSON bool, text func(task.Task)) error {
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(taskView(fromPB(t)))
	}
	text(fromPB(t))
	return nil
}

func newGetCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "print a task through a grit server (grit task reads the store)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.remoteTask(cmd.Context(), server, args[0], (*client.Client).Get, asJSON, func(t task.Task) { printTaskFields(e.stdout, t) })
		},
	}
	serverFlag(cmd, &server)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the task as JSON")
	return cmd
}

func newCancelCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "cancel a task that has not ended (and its dependents) through a grit server",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.remoteTask(cmd.Context(), server, args[0], (*client.Client).Cancel, asJSON, func(t task.Task) {
				fmt.Fprintf(e.stdout, "task %d: %s\n", t.ID, t.State)
			})
		},
	}
	serverFlag(cmd, &server)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the task after the cancel as JSON")
	return cmd
}

func (e *env) remoteTask(ctx context.Context, server, arg string, call func(*client.Client, context.Context, int64) (*pb.Task, error),
	asJSON bool, text func(task.Task)) error {
	id, err := parseID(arg)
	if err != nil {
		return err
	}
	c, cfg, err := e.remote(server)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	t, err := call(c, ctx, id)
	if client.Code(err) == codes.NotFound {
		return usageErr("no task has id %d in the store of the server at %s", id, cfg.Addr)
	}
	if err != nil {
		return remoteErr(cfg, err)
	}
	return e.printRemote(t, asJSON, text)
}

// timeoutFlag is --timeout: a duration, or auto (task.AutoTimeout).
type timeoutFlag time.Duration

func (f *timeoutFlag) String() string {
	if time.Duration(*f) == task.AutoTimeout {
		return "auto"
	}
	return time.Duration(*f).String()
}

func (f *timeoutFlag) Set(s string) error {
	if strings.EqualFold(s, "auto") {
		*f = timeoutFlag(task.AutoTimeout)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (e.g. 30s, 2m) or auto", s)
	}
	*f = timeoutFlag(d)
	return nil
}

func (f *timeoutFlag) Type() string { return "duration|auto" }
