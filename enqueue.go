package grit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/task"
)

// EnqueueOption sets one field of an enqueued task.
type EnqueueOption func(*task.NewTask)

// RunAt makes the task due at t rather than now.
func RunAt(t time.Time) EnqueueOption { return func(n *task.NewTask) { n.RunAt = t } }

// InQueue puts the task in a queue other than "default".
func InQueue(q string) EnqueueOption { return func(n *task.NewTask) { n.Queue = q } }

// WithPriority sets the priority: higher runs first.
func WithPriority(p int) EnqueueOption { return func(n *task.NewTask) { n.Priority = p } }

// WithKey sets an idempotency key: enqueueing the same work (kind and
// args) with the key again answers the existing task, Existed, instead of
// creating a second one. Other work under a key already taken is refused
// with a *task.KeyConflictError (ErrKeyConflict), unless ReturnExisting.
func WithKey(k string) EnqueueOption { return func(n *task.NewTask) { n.IdempotencyKey = k } }

// ReturnExisting makes a key already taken by other work (another kind or
// other args) answer the task that holds it, Existed, instead of failing
// with ErrKeyConflict: "this key once, whatever it carries".
func ReturnExisting() EnqueueOption { return func(n *task.NewTask) { n.ReturnExisting = true } }

// Enqueued is what Enqueue answers: the task, and whether it existed
// already (its idempotency key was taken by the same work) rather than
// being created by this call.
type Enqueued = task.Enqueued

// WithPolicy overrides the handler's retry policy for this task.
func WithPolicy(p string) EnqueueOption { return func(n *task.NewTask) { n.Policy = p } }

// WithTimeout overrides the handler's timeout for this task; AutoTimeout
// asks for one learned from the task's successful runs.
func WithTimeout(d time.Duration) EnqueueOption { return func(n *task.NewTask) { n.Timeout = d } }

// WithGrace is how long the task's process (a process task's, or an
// isolated handler's) has between SIGTERM and SIGKILL when its attempt is
// cut off; default 5s.
func WithGrace(d time.Duration) EnqueueOption { return func(n *task.NewTask) { n.Grace = d } }

// InGroup names the downstream the task calls.
func InGroup(g string) EnqueueOption { return func(n *task.NewTask) { n.Group = g } }

// ForTenant makes the task the tenant's work: a limit of running attempts
// per tenant (grit limits set tenant NAME N) holds it back with the
// tenant's other tasks.
func ForTenant(t string) EnqueueOption { return func(n *task.NewTask) { n.Tenant = t } }

// Enqueue inserts a task of kind with args encoded as JSON, and wakes this
// client's worker. With WithKey, a key used before for the same work
// answers the existing task, Existed.
func (c *Client) Enqueue(ctx context.Context, kind string, args any, opts ...EnqueueOption) (Enqueued, error) {
	if err := c.noStore(); err != nil {
		return Enqueued{}, err
	}
	n, err := c.newTask(kind, args, opts)
	if err != nil {
		return Enqueued{}, err
	}
	ns := []task.NewTask{n}
	traced := c.tracer.Enqueue(ctx, ns)
	ts, err := c.store.Enqueue(ctx, ns)
	traced(ts, err)
	if err != nil {
		return Enqueued{}, fmt.Errorf("grit: enqueue %s: %w", kind, err)
	}
	c.metrics.Enqueued(ts)
	if !ts[0].Existed {
		c.engine.Wake()
	}
	return ts[0], nil
}

// txEnqueuer is the optional capability EnqueueTx needs (the PostgreSQL
// store has it).
type txEnqueuer interface {
	EnqueueTx(ctx context.Context, tx pgx.Tx, ts []task.NewTask) ([]task.Enqueued, error)
}

// EnqueueTx inserts a task in the caller's PostgreSQL transaction: the task
// exists if and only if tx commits, and no worker sees it before (a
// transactional outbox). The store must be the PostgreSQL one, and tx on
// its database.
func (c *Client) EnqueueTx(ctx context.Context, tx pgx.Tx, kind string, args any, opts ...EnqueueOption) (Enqueued, error) {
	if err := c.noStore(); err != nil {
		return Enqueued{}, err
	}
	te, ok := c.store.(txEnqueuer)
	if !ok {
		return Enqueued{}, fmt.Errorf("grit: enqueue %s in a transaction: the store cannot (use the PostgreSQL store): %w", kind, task.ErrInvalid)
	}
	n, err := c.newTask(kind, args, opts)
	if err != nil {
		return Enqueued{}, err
	}
	ns := []task.NewTask{n}
	traced := c.tracer.Enqueue(ctx, ns)
	ts, err := te.EnqueueTx(ctx, tx, ns)
	traced(ts, err)
	if err != nil {
		return Enqueued{}, fmt.Errorf("grit: enqueue %s in a transaction: %w", kind, err)
	}
	c.metrics.Enqueued(ts) // counted when enqueued, though tx may yet roll back
	return ts[0], nil
}

func newTask(kind string, args any, opts []EnqueueOption) (task.NewTask, error) {
	if kind == "" {
		return task.NewTask{}, errNoKind
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return task.NewTask{}, fmt.Errorf("grit: enqueue %s: args do not encode as JSON: %w", kind, err)
	}
	n := task.NewTask{Kind: kind, Args: raw}
	for _, o := range opts {
		o(&n)
	}
	return n, nil
}

// Task returns a task by id.
func (c *Client) Task(ctx context.Context, id int64) (task.Task, error) {
	if err := c.noStore(); err != nil {
		return task.Task{}, err
	}
	return c.store.GetTask(ctx, id)
}

// newTask is the task Enqueue inserts: in the group of the kind's handler
// unless an option names one.
func (c *Client) newTask(kind string, args any, opts []EnqueueOption) (task.NewTask, error) {
	n, err := newTask(kind, args, opts)
	if err == nil && n.Group == "" {
		c.mu.RLock()
		n.Group = c.groups[kind]
		c.mu.RUnlock()
	}
	return n, err
}
