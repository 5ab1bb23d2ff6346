package grit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/grit-run/grit/store"
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
func (c *Client) Enqueue(ctx context.Context, kind string, args any, opts ...EnqueueOption) (task.Enqueued, error) {
	n, err := c.newTask(kind, args, opts)
	if err != nil {
		return task.Enqueued{}, err
	}
	ts, err := c.enqueue(ctx, []task.NewTask{n})
	if err != nil {
		return task.Enqueued{}, fmt.Errorf("grit: enqueue %s: %w", kind, err)
	}
	return ts[0], nil
}

// EnqueueMany inserts tasks in one transaction (all or none), and wakes
// this client's worker: the way to enqueue a batch. Each answer is its
// task's, in order; a task whose IdempotencyKey is taken answers the task
// that holds it, Existed, as Enqueue does. A task without a Group is in
// the group of its kind's handler, as with Enqueue.
func (c *Client) EnqueueMany(ctx context.Context, ts []task.NewTask) ([]task.Enqueued, error) {
	ns := make([]task.NewTask, len(ts))
	for i, n := range ts {
		ns[i] = c.withGroup(n)
	}
	out, err := c.enqueue(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("grit: enqueue %d tasks: %w", len(ns), err)
	}
	return out, nil
}

// enqueue inserts ns, traced and counted, and wakes the worker when one
// is new.
func (c *Client) enqueue(ctx context.Context, ns []task.NewTask) ([]task.Enqueued, error) {
	st, err := c.driver()
	if err != nil {
		return nil, err
	}
	traced := c.tracer.Enqueue(ctx, ns)
	ts, err := st.Enqueue(ctx, ns)
	traced(ts, err)
	if err != nil {
		return nil, err
	}
	c.metrics.Enqueued(ts)
	for _, t := range ts {
		if !t.Existed {
			c.engine.Wake()
			break
		}
	}
	return ts, nil
}

// EnqueueTx inserts a task in the caller's transaction: the task exists if
// and only if tx commits, and no worker sees it before (a transactional
// outbox). The store must be the PostgreSQL one (store/postgres), and tx a
// pgx.Tx on its database: the type is the driver's, so that this package
// links no database driver; another is refused, saying what it wants.
func (c *Client) EnqueueTx(ctx context.Context, tx any, kind string, args any, opts ...EnqueueOption) (task.Enqueued, error) {
	if _, err := c.driver(); err != nil {
		return task.Enqueued{}, err
	}
	te, ok := c.store.(store.InTx)
	if !ok {
		return task.Enqueued{}, fmt.Errorf("grit: enqueue %s in a transaction: the store cannot (use the PostgreSQL store): %w", kind, task.ErrInvalid)
	}
	n, err := c.newTask(kind, args, opts)
	if err != nil {
		return task.Enqueued{}, err
	}
	ns := []task.NewTask{n}
	traced := c.tracer.Enqueue(ctx, ns)
	ts, err := te.EnqueueIn(ctx, tx, ns)
	traced(ts, err)
	if err != nil {
		return task.Enqueued{}, fmt.Errorf("grit: enqueue %s in a transaction: %w", kind, err)
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

// newTask is the task Enqueue inserts: in the group of the kind's handler
// unless an option names one.
func (c *Client) newTask(kind string, args any, opts []EnqueueOption) (task.NewTask, error) {
	n, err := newTask(kind, args, opts)
	return c.withGroup(n), err
}

// withGroup is n in the group of its kind's handler, unless it names one.
func (c *Client) withGroup(n task.NewTask) task.NewTask {
	if n.Group == "" {
		c.mu.RLock()
		n.Group = c.groups[n.Kind]
		c.mu.RUnlock()
	}
	return n
}
