package engine

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// The child's side of isolated handlers (isolate.go): an engine made by
// NewChild registers its handlers as any engine does, and its Start
// serves the attempts its worker hands it, one at a time, until the
// worker closes its socket or dies; then the process exits. A child has
// no store: its worker claims, records and keeps the leases, and a
// handler's steps, the one store call an attempt makes, are asked of the
// worker over the socket (childSide is the attempt's store.Stepper).

// IsChild reports whether this process was started as an isolated
// handler's child (ChildEnv).
func IsChild() bool { return os.Getenv(ChildEnv) != "" }

// ErrChild is the error of what an isolated handler's child cannot do:
// it has no store of its own.
var ErrChild = errors.New("grit: this process is an isolated handler's child: it has no store; in main, guard what is not registering handlers and Start with grit.IsChild (docs/engine.md)")

// errTerminated ends an isolated attempt whose worker sent its child
// SIGTERM (a timeout, a cancel, a stop): the handler's context ends.
var errTerminated = errors.New("engine: isolated handler's process terminated by its worker")

// childSide is a child's connection to its worker.
type childSide struct {
	fd      int // the socket's descriptor, taken at Start
	conn    *os.File
	mu      sync.Mutex // one message at a time
	enc     *gob.Encoder
	replies chan toChild // the worker's answers to the steps' calls
}

func (c *childSide) send(m fromChild) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.enc.Encode(m)
}

// call asks the worker to do a step's store call and waits for its
// answer.
func (c *childSide) call(ctx context.Context, m fromChild) (toChild, error) {
	if err := c.send(m); err != nil {
		return toChild{}, fmt.Errorf("ask the worker: %w", err)
	}
	select {
	case r := <-c.replies:
		return r, r.Err.err()
	case <-ctx.Done():
		return toChild{}, context.Cause(ctx)
	}
}

// NewChild returns the engine of an isolated handler's child, for a
// process started with ChildEnv: handlers are registered on it as on any
// engine, and Start serves its worker. It has no store (cfg.Store must be
// nil, and Store returns nil); of cfg it uses the Logger alone.
func NewChild(cfg Config) (*Engine, error) {
	if cfg.Store != nil {
		return nil, errors.New("engine: an isolated handler's child has no store: its worker keeps the tasks (give NewChild none)")
	}
	fd, err := strconv.Atoi(os.Getenv(ChildEnv))
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("engine: %s=%q: want the number of the socket to the worker", ChildEnv, os.Getenv(ChildEnv))
	}
	side := &childSide{fd: fd, replies: make(chan toChild, 1)}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg.Metrics = gate.NoMetrics{} // the worker counts its attempts
	return &Engine{cfg: cfg, handlers: map[string]*Handler{}, child: side}, nil
}

// serveChild is Start in a child: it tells the worker its kinds, then
// runs each attempt the worker hands it and answers its result. The
// worker closing the socket, or dying, ends the process at once; SIGTERM
// ends the attempt at hand (its context ends), answers it, and ends the
// process. An attempt runs on this goroutine: one at a time, with no
// hop to another goroutine and back.
func (e *Engine) serveChild() {
	side := e.child
	// The socket is taken only now, when the process serves: NewChild
	// leaves the descriptor alone. Non-blocking, so that the reader waits
	// in the runtime's poller and its message wakes the attempt on the
	// same thread, not another.
	if err := syscall.SetNonblock(side.fd, true); err != nil {
		fmt.Fprintf(os.Stderr, "grit: isolated handler's process: its socket %s=%d: %v\n", ChildEnv, side.fd, err)
		os.Exit(2)
	}
	side.conn = os.NewFile(uintptr(side.fd), "grit-worker")
	side.enc = gob.NewEncoder(side.conn)
	if err := side.send(fromChild{Ready: e.kinds}); err != nil {
		fmt.Fprintln(os.Stderr, "grit: isolated handler's process: tell the worker it is ready:", err)
		os.Exit(2)
	}
	var term childTerm
	term.watch()
	runs := make(chan *childRun)
	var silent silence
	go func() {
		dec := gob.NewDecoder(side.conn)
		for {
			var m toChild
			if err := dec.Decode(&m); err != nil {
				os.Exit(0) // the worker let this child go, or died
			}
			switch {
			case m.Run != nil:
				silent.arm(m.Run.Silence)
				runs <- m.Run
			case m.Alive:
				silent.heard()
			default:
				side.replies <- m
			}
		}
	}()
	for r := range runs {
		res := e.childAttempt(term.begin(), r)
		silent.disarm()
		if err := side.send(fromChild{Result: res}); err != nil || term.end() {
			os.Exit(0)
		}
	}
}

// silence ends the child when its worker has said nothing for a lease
// while an attempt runs (childRun.Silence): the worker is frozen
// (SIGSTOP, a paused VM) or gone, its lease lapses, and a sibling may be
// working the task already. The child ends itself, and the attempt with
// it, as a worker's own attempts end within a lease of its last
// heartbeat.
type silence struct {
	mu    sync.Mutex
	timer *time.Timer
	d     time.Duration // 0: no attempt runs
}

// arm starts the count for an attempt that begins.
func (s *silence) arm(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = d
	if d <= 0 {
		return
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.fire)
		return
	}
	s.timer.Reset(d)
}

// heard starts the count again: the worker lives.
func (s *silence) heard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil && s.d > 0 {
		s.timer.Reset(s.d)
	}
}

// disarm stops the count: the attempt has ended.
func (s *silence) disarm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = 0
	if s.timer != nil {
		s.timer.Stop()
	}
}

func (s *silence) fire() {
	s.mu.Lock()
	d := s.d
	s.mu.Unlock()
	if d > 0 {
		fmt.Fprintf(os.Stderr, "grit: isolated handler's process: its worker said nothing for %v (frozen or gone): ending the attempt\n", d)
		os.Exit(3)
	}
}

// childTerm is what SIGTERM does in a child: it ends the attempt at hand,
// whose result is still answered, or, between attempts, the process.
type childTerm struct {
	mu          sync.Mutex
	cancel      context.CancelCauseFunc // the attempt at hand's; nil between
	terminating bool
}

func (t *childTerm) watch() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	go func() {
		for range sig {
			t.mu.Lock()
			if t.cancel == nil {
				os.Exit(0)
			}
			t.terminating = true
			t.cancel(errTerminated)
			t.mu.Unlock()
		}
	}()
}

// begin is the context of an attempt that begins.
func (t *childTerm) begin() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cancel = cancel
	return ctx
}

// end ends the attempt's context and says whether the process is to end.
func (t *childTerm) end() (terminating bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cancel(nil)
	t.cancel = nil
	return t.terminating
}

// childAttempt runs one attempt in the child, with the context a handler
// has in a worker: the attempt's information, its deadline (a little
// past the worker's, which decides), publishing and steps.
func (e *Engine) childAttempt(ctx context.Context, r *childRun) *childResult {
	h, ok := e.handlers[r.Task.Kind]
	if !ok {
		return &childResult{Err: wire(fmt.Errorf("no handler for kind %q in this process", r.Task.Kind))}
	}
	a := &inflight{t: r.Task, view: r.Task}
	a.rec.tenant = r.Task.Tenant
	a.actx = attemptCtx{Context: ctx, info: r.Info, rec: &a.rec, e: e, a: a}
	var hctx context.Context = &a.actx
	if !r.Deadline.IsZero() {
		var cancel context.CancelFunc
		hctx, cancel = context.WithDeadlineCause(hctx, r.Deadline, errTimedOut)
		defer cancel()
	}
	err := call(hctx, h, &a.view)
	a.rec.mu.Lock()
	defer a.rec.mu.Unlock()
	return &childResult{Err: wire(err), Events: a.rec.events}
}

// A child's steps go to its worker's store.
var _ store.Stepper = (*childSide)(nil)

// Steps asks the worker for the steps its running task recorded: a
// child serves one attempt at a time, so the task is the one at hand.
func (c *childSide) Steps(ctx context.Context, taskID int64) ([]task.Step, error) {
	r, err := c.call(ctx, fromChild{Steps: true})
	return r.Steps, err
}

// RecordStep asks the worker to record a step of the task at hand, under
// the lease the worker holds.
func (c *childSide) RecordStep(ctx context.Context, taskID, token int64, st task.Step) (task.Step, error) {
	r, err := c.call(ctx, fromChild{Record: &st})
	if err != nil || r.Step == nil {
		return task.Step{}, err
	}
	return *r.Step, nil
}

// quarantine asks the worker to set items of the task at hand aside, and
// to add seen to the items it saw: the worker keeps the attempt's count
// and judges it.
func (c *childSide) quarantine(ctx context.Context, items []task.Quarantined, seen int) error {
	if len(items) == 0 && seen <= 0 {
		return nil
	}
	_, err := c.call(ctx, fromChild{Quarantine: items, Saw: seen})
	return err
}
