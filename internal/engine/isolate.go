package engine

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/grit-run/grit/internal/proc"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// An isolated handler (Handler.Isolate) runs its attempts in child
// processes: this program started again in child mode (ChildEnv), kept
// warm in a pool, each running one attempt at a time. The parent hands
// a child the attempt over a socket, answers its steps' store calls, and
// reads its result; when the attempt's context ends (timeout, cancel,
// lost lease, stop) the child gets the kill sequence of a process task
// (SIGTERM to its group, the grace, SIGKILL) and is replaced. A child
// that dies on its own (a panic on a goroutine of its own, os.Exit, a
// signal, its memory limit) ends its attempt as a failure that says how
// it died, and the worker and its other attempts go on. Children die
// with their worker: Pdeathsig, and the end of their socket.

// ChildEnv is the environment variable that starts a program as an
// isolated handler's child: its value is the number of the file
// descriptor of its socket to the worker.
const ChildEnv = "GRIT_ISOLATED_CHILD"

// childFD is the child's socket, as the parent passes it (ExtraFiles[0]).
const childFD = 3

// Isolation is how the children of isolated handlers run.
type Isolation struct {
	// All isolates every handler registered (process tasks aside, which
	// are processes already), as Handler.Isolate does one.
	All bool
	// Command is a child's program and arguments. Default: this program
	// (os.Executable) with this process's arguments, which must reach
	// the registration of the same handlers and Start.
	Command []string
	// MemoryLimit, when positive, is the most resident memory a child may
	// hold, in bytes: one over it is killed (SIGKILL), its attempt fails
	// saying so, and another takes its place.
	MemoryLimit int64
	// MaxAttempts, when positive, retires a child after that many
	// attempts, so that what a handler leaks is given back.
	MaxAttempts int
	// Warm is how many children Start starts ahead of work (at most
	// Concurrency), so that the first isolated attempts do not wait for a
	// child's start; Start returns once they are ready, and fails if one
	// cannot start, saying why. 0: each starts when an attempt first
	// needs it; the pool then keeps it.
	Warm int
	// StartTimeout bounds a child's start, until it is ready for work;
	// default 30s.
	StartTimeout time.Duration
	// Stderr receives the children's standard output and error (besides
	// the tail kept to say how one died); nil is this process's standard
	// error (a child's output is not the worker's to share).
	Stderr io.Writer
}

func (i Isolation) validate() error {
	if i.MemoryLimit < 0 || i.MaxAttempts < 0 || i.StartTimeout < 0 || i.Warm < 0 {
		return errors.New("engine: isolation: negative memory limit, attempts, warm children or start timeout")
	}
	return nil
}

// memoryLook is how often the pool reads its children's memory when they
// have a limit.
const memoryLook = 50 * time.Millisecond

// The messages between a worker and its child, gob-encoded on the socket.
type (
	// toChild is the parent's message: an attempt to run, or the answer
	// to a step's call.
	toChild struct {
		Run   *childRun
		Alive bool        // the worker lives: the attempt at hand may go on
		Steps []task.Step // Steps' answer
		Step  *task.Step  // RecordStep's answer
		Err   *wireErr    // the call's error
	}
	childRun struct {
		Task     task.Task
		Info     HandlerAttempt
		Deadline time.Time // zero: none
		// Silence is how long the child waits for a sign of life (Alive)
		// from its worker, which sends one every third of it: past it, the
		// worker is frozen or gone, a sibling may take the task over, and
		// the child ends itself.
		Silence time.Duration
	}
	// fromChild is the child's message: ready, a result, or a step's
	// call to the store.
	fromChild struct {
		Ready  []string // the kinds it has handlers for; its first message
		Result *childResult
		Steps  bool       // Steps of the running task
		Record *task.Step // RecordStep for the running task
		// Quarantine sets items of the running task aside, and Saw adds
		// to the items it saw (Quarantine, Saw).
		Quarantine []task.Quarantined
		Saw        int
	}
	childResult struct {
		Err    *wireErr // nil: success
		Events []task.Event
	}
	// wireErr is an error across the socket: its message and what
	// classifying it found, so that the parent's policy decides as it
	// would on the error itself.
	wireErr struct {
		Msg    string
		Class  retry.Class // its marks (retry.Marked)
		Delay  time.Duration
		Outage bool          // retry.Classify infers an outage (unmarked)
		Snooze time.Duration // a SnoozeError's delay
		Snoozy bool
	}
)

// wire is err as it crosses the socket.
func wire(err error) *wireErr {
	if err == nil {
		return nil
	}
	w := &wireErr{Msg: err.Error()}
	var se *SnoozeError
	if errors.As(err, &se) {
		w.Snoozy, w.Snooze = true, se.Delay
	}
	w.Class, w.Delay = retry.Marked(err)
	if w.Class == retry.Unclassified {
		c, _ := retry.Classify(err)
		w.Outage = c == retry.ClassTransient
	}
	return w
}

// childError is an error that crossed the socket: its message, the mark
// it had, and whether it was an outage.
type childError struct {
	msg    string
	outage bool
	wraps  error // context.Canceled, for a cancelled one
}

func (e *childError) Error() string { return e.msg }
func (e *childError) Timeout() bool { return e.outage } // how retry.Classify sees an outage
func (e *childError) Unwrap() error { return e.wraps }

// err is w as an error the parent's policy classifies as the child's
// would have.
func (w *wireErr) err() error {
	if w == nil {
		return nil
	}
	if w.Snoozy {
		return Snooze(w.Snooze)
	}
	base := &childError{msg: w.Msg, outage: w.Outage}
	switch w.Class {
	case retry.ClassPermanent:
		return retry.Permanent(base)
	case retry.ClassTransient:
		return retry.Transient(base)
	case retry.ClassAfter:
		return retry.After(base, w.Delay)
	case retry.ClassResource:
		return retry.Resource(base)
	case retry.ClassCanceled:
		base.wraps = context.Canceled
	}
	return base
}

// child is a running child process and its socket.
type child struct {
	p        *proc.Child
	conn     *os.File
	encMu    sync.Mutex // the attempt's goroutine and its keepAlive send
	enc      *gob.Encoder
	dec      *gob.Decoder
	kinds    []string
	attempts int
	// overMemory is the resident memory at which the pool killed it, 0
	// if it did not.
	overMemory atomic.Int64
}

// childPool keeps the idle children of a worker's isolated handlers.
type childPool struct {
	e    *Engine
	cfg  Isolation
	mu   sync.Mutex
	idle []*child
	live map[*child]struct{} // idle or at work, for the memory watch
	done chan struct{}       // closed by close
	once sync.Once
	wg   sync.WaitGroup
}

func newChildPool(e *Engine, cfg Isolation) *childPool {
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	p := &childPool{e: e, cfg: cfg, live: map[*child]struct{}{}, done: make(chan struct{})}
	if cfg.MemoryLimit > 0 {
		p.wg.Go(p.watchMemory)
	}
	return p
}

// get returns an idle child, or starts one. An idle child that died
// meanwhile (its memory limit, a goroutine of a handler that outlived
// its attempt) is let go, for the next attempt is not to blame.
func (p *childPool) get(ctx context.Context) (*child, error) {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			return p.start(ctx)
		}
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		select {
		case <-c.p.Exited():
			p.e.cfg.Logger.Warn("an idle isolated handler's process died", "pid", c.p.Pid, "how", p.death(c))
			p.discard(c)
		default:
			return c, nil
		}
	}
}

// warm starts n children at once and makes them idle; the first error
// of a start, if any, once every start has ended.
func (p *childPool) warm(ctx context.Context, n int) error {
	errs := make(chan error, n)
	for range n {
		go func() {
			c, err := p.start(ctx)
			if err == nil {
				p.keep(c)
			}
			errs <- err
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// put gives a child back after an attempt that ended well; it is retired
// instead after its MaxAttempts, or once the pool is closed.
func (p *childPool) put(c *child) {
	c.attempts++
	p.keep(c)
}

// keep makes a child idle, or retires it after its MaxAttempts or once
// the pool is closed.
func (p *childPool) keep(c *child) {
	p.mu.Lock()
	if (p.cfg.MaxAttempts > 0 && c.attempts >= p.cfg.MaxAttempts) || p.closed() {
		p.mu.Unlock()
		p.retire(c)
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

func (p *childPool) closed() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// retire ends a child that is not at work: its socket closes, and it
// exits; one that lingers gets the kill sequence.
func (p *childPool) retire(c *child) {
	c.conn.Close()
	c.p.Stop(proc.DefaultGrace)
	p.discard(c)
}

// discard lets go of a child that has exited (and been reaped): its
// socket is closed.
func (p *childPool) discard(c *child) {
	c.conn.Close()
	p.mu.Lock()
	delete(p.live, c)
	p.mu.Unlock()
}

// close retires the idle children and stops the memory watch; children
// at work are retired when their attempt ends.
func (p *childPool) close() {
	p.once.Do(func() {
		close(p.done)
		p.mu.Lock()
		idle := p.idle
		p.idle = nil
		p.mu.Unlock()
		for _, c := range idle {
			p.retire(c)
		}
		p.wg.Wait()
	})
}

// command is the child's command: Command, or this program with its
// arguments.
func (p *childPool) command() (*exec.Cmd, error) {
	argv := p.cfg.Command
	if len(argv) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find this program to start an isolated handler's child: %w", err)
		}
		argv = append([]string{self}, os.Args[1:]...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	// Tagged as a process task is, so that a sweep after this worker dies
	// ends what a child left behind (docs/engine.md).
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", ChildEnv, childFD), workerTag+"="+p.e.cfg.WorkerID, workerPID)
	return cmd, nil
}

// start starts a child and waits until it is ready.
func (p *childPool) start(ctx context.Context) (*child, error) {
	cmd, err := p.command()
	if err != nil {
		return nil, err
	}
	fds, err := socketPair()
	if err != nil {
		return nil, fmt.Errorf("isolated handler: socket pair: %w", err)
	}
	// The worker's end is non-blocking, so that its reads wait in the
	// runtime's poller rather than each holding a thread in a read: a
	// worker has as many children as slots.
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, fmt.Errorf("isolated handler: socket pair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "grit-child"), os.NewFile(uintptr(fds[1]), "grit-parent")
	cmd.ExtraFiles = []*os.File{theirs}
	pc, err := proc.StartChild(cmd, 0, p.cfg.Stderr)
	theirs.Close()
	if err != nil {
		ours.Close()
		return nil, fmt.Errorf("isolated handler: start %s: %w", cmd.Path, err)
	}
	c := &child{p: pc, conn: ours, enc: gob.NewEncoder(ours), dec: gob.NewDecoder(ours)}
	p.mu.Lock()
	p.live[c] = struct{}{}
	p.mu.Unlock()
	wait, cancel := context.WithTimeoutCause(ctx, p.cfg.StartTimeout, errNotReady)
	defer cancel()
	m, err := c.recv(wait)
	switch {
	case err == nil && m.Ready != nil:
		c.kinds = m.Ready
		p.e.stats.ChildStarts.Add(1)
		return c, nil
	case errors.Is(context.Cause(wait), errNotReady):
		c.p.Kill()
		err = fmt.Errorf("isolated handler: the child %s was not ready within %v: does its main reach the client's Start? (docs/engine.md)", cmd.Path, p.cfg.StartTimeout)
	case wait.Err() != nil:
		c.p.Kill()
		err = context.Cause(wait)
	default:
		err = fmt.Errorf("isolated handler: the child %s ended before it was ready: %s (in child mode grit.Open and grit.New make a client that has no store: what main does besides registering handlers and Start must be guarded by grit.IsChild; docs/engine.md)",
			cmd.Path, p.death(c))
	}
	c.conn.Close()
	c.p.Wait()
	p.discard(c)
	return nil, err
}

// errNotReady is the cause of the end of the wait for a child that was
// not ready within its StartTimeout.
var errNotReady = errors.New("engine: isolated handler's child not ready in time")

// recv reads the child's next message on the goroutine of the attempt,
// with no reader to hop through; ctx ending cuts the wait short, by the
// socket's read deadline, and the child is then not read again.
func (c *child) recv(ctx context.Context) (fromChild, error) {
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.conn.SetReadDeadline(time.Unix(1, 0))
		close(fired)
	})
	var m fromChild
	err := c.dec.Decode(&m)
	if !stop() {
		<-fired
		if err == nil {
			// Read whole as ctx ended: the child may yet serve.
			c.conn.SetReadDeadline(time.Time{})
		}
	}
	return m, err
}

// send sends the child a message; the attempt's goroutine and its
// keepAlive take turns.
func (c *child) send(m toChild) error {
	c.encMu.Lock()
	defer c.encMu.Unlock()
	return c.enc.Encode(m)
}

// keepAlive tells the child every period, while its attempt runs, that
// its worker lives (childRun.Silence); the function it returns stops it.
func (c *child) keepAlive(period time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if c.send(toChild{Alive: true}) != nil {
					return // the attempt's own read finds the child gone
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// run runs an attempt of t in a child and returns its handler's error.
func (p *childPool) run(ctx context.Context, a *inflight, t *task.Task) error {
	c, err := p.get(ctx)
	if err != nil {
		return err
	}
	if !c.has(t.Kind) {
		p.put(c)
		return retry.Permanent(fmt.Errorf("isolated handler: the child has no handler for kind %q (it has %s): the child must register the same handlers as the worker", t.Kind, strings.Join(c.kinds, ", ")))
	}
	run := &childRun{Task: *t, Info: a.actx.info, Silence: p.e.cfg.Lease}
	if d, ok := ctx.Deadline(); ok {
		// A little past the worker's own: the worker's deadline, not the
		// child's, decides that the attempt timed out.
		run.Deadline = d.Add(100 * time.Millisecond)
	}
	if err := c.send(toChild{Run: run}); err != nil {
		return p.died(c, fmt.Errorf("hand it the attempt: %w", err))
	}
	defer c.keepAlive(run.Silence / 3)()
	for {
		m, err := c.recv(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			p.stop(c, ctx, t)
			return context.Cause(ctx)
		case err != nil:
			return p.died(c, nil)
		case m.Result != nil:
			for _, ev := range m.Result.Events {
				a.rec.mu.Lock()
				a.rec.events = append(a.rec.events, ev)
				a.rec.mu.Unlock()
			}
			p.put(c)
			return m.Result.Err.err()
		case m.Steps || m.Record != nil || m.Quarantine != nil || m.Saw > 0:
			if err := c.send(p.step(ctx, a, m)); err != nil {
				return p.died(c, fmt.Errorf("answer its step: %w", err))
			}
		}
	}
}

// step answers a child's step call with the worker's store.
func (p *childPool) step(ctx context.Context, a *inflight, m fromChild) toChild {
	if m.Quarantine != nil || m.Saw > 0 {
		a.quar.Saw(m.Saw)
		return toChild{Err: wire(p.e.quarantine(ctx, a, m.Quarantine))}
	}
	sp := p.e.cfg.Store
	if m.Steps {
		steps, err := sp.Steps(ctx, a.t.ID)
		return toChild{Steps: steps, Err: wire(err)}
	}
	rec, err := sp.RecordStep(ctx, a.t.ID, a.t.LeaseToken, *m.Record)
	return toChild{Step: &rec, Err: wire(err)}
}

// stop cuts off the child of an attempt whose context ended: at once for
// a lost lease (proc.ErrKill), else with the kill sequence and the task's
// grace, as a process task's.
func (p *childPool) stop(c *child, ctx context.Context, t *task.Task) {
	if errors.Is(context.Cause(ctx), proc.ErrKill) {
		c.p.Kill()
		c.p.Wait()
	} else {
		c.p.Stop(childGrace(t))
	}
	p.discard(c)
}

// childGrace is how long an isolated handler's child has between SIGTERM
// and SIGKILL: the task's grace, else a process task's default.
func childGrace(t *task.Task) time.Duration {
	if t.Grace > 0 {
		return t.Grace
	}
	return proc.DefaultGrace
}

// died is the error of an attempt whose child died (or whose socket
// failed, cause): how it died, from its exit status and the end of its
// standard error.
func (p *childPool) died(c *child, cause error) error {
	if cause != nil {
		c.p.Kill()
	}
	msg := p.death(c)
	p.discard(c)
	if cause != nil {
		msg += " (" + cause.Error() + ")"
	}
	return errors.New("isolated handler's process " + msg)
}

// death waits for a child whose socket ended to exit (killing it if it
// lingers) and says how it died.
func (p *childPool) death(c *child) string {
	select {
	case <-c.p.Exited():
	case <-time.After(time.Second):
		c.p.Kill()
	}
	code, sig := c.p.Wait()
	var how string
	switch {
	case c.overMemory.Load() > 0:
		how = fmt.Sprintf("was killed (SIGKILL): it held %s of memory, over its limit of %s", mib(c.overMemory.Load()), mib(p.cfg.MemoryLimit))
	case sig != "":
		how = "was killed by " + sig
	default:
		how = fmt.Sprintf("exited with status %d", code)
	}
	if line := lastWords(c.p.Stderr()); line != "" {
		how += ": " + line
	}
	return how
}

func mib(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

// lastWords is what a dead child's standard error says of its end: a Go
// panic's or fatal error's line, else its last line.
func lastWords(stderr []byte) string {
	lines := bytes.Split(bytes.TrimSpace(stderr), []byte("\n"))
	for _, prefix := range []string{"panic: ", "fatal error: ", "runtime: out of memory"} {
		for _, l := range lines {
			if bytes.HasPrefix(l, []byte(prefix)) {
				return strings.TrimSpace(string(l))
			}
		}
	}
	return strings.TrimSpace(string(lines[len(lines)-1]))
}

func (c *child) has(kind string) bool {
	for _, k := range c.kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// watchMemory kills the children over the memory limit.
func (p *childPool) watchMemory() {
	tick := time.NewTicker(memoryLook)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
		p.mu.Lock()
		for c := range p.live {
			if n, err := c.p.RSS(); err == nil && n > p.cfg.MemoryLimit && c.overMemory.CompareAndSwap(0, n) {
				c.p.Kill()
			}
		}
		p.mu.Unlock()
	}
}
