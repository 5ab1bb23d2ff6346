package grittest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/internal/clock"
	"github.com/grit-run/grit/retention"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
)

// Client is a grit.Client on a SQLite store of the test's own, in
// t.TempDir(), whose time is a clock the test moves (Advance): the
// store's due times and leases and the worker's timers all run on it.
// Register handlers on the embedded grit.Client (grit.Handle(c.Client,
// …)) before the first Work: the worker starts then, and a handler
// registered after fails. Its worker runs only what Work and its
// siblings ask for, one attempt at a time.
type Client struct {
	*grit.Client
	h *harness

	mu      sync.Mutex
	started bool
}

// NewClient returns a client on a new store in t.TempDir(), stopped and
// closed when the test ends. cfg is the client's grit.Config, with two
// defaults of its own: WorkerID "grittest", and Retention off (unless
// cfg sets it), so that advancing the clock by days prunes none of what
// the test looks at. Its clock starts at the machine's time, to the
// second.
func NewClient(t testing.TB, cfg grit.Config) *Client {
	t.Helper()
	fc := clock.NewFake(time.Now().UTC().Truncate(time.Second))
	st, err := sqlite.OpenConfig(context.Background(), sqlite.Config{Path: sqlitetest.Path(t), Now: fc.Now})
	if err != nil {
		t.Fatalf("grittest: open the test's store: %v", err)
	}
	h := &harness{Store: st, fc: fc, poke: make(chan struct{}, 1)}
	if cfg.WorkerID == "" {
		cfg.WorkerID = "grittest"
	}
	if cfg.Retention.Keep == nil && cfg.Retention.Queues == nil && cfg.Retention.Workers == 0 {
		cfg.Retention = retention.Policy{Off: true}
	}
	gc, err := grit.New(h, cfg)
	if err != nil {
		st.Close()
		t.Fatalf("grittest: new client: %v", err)
	}
	c := &Client{Client: gc, h: h}
	t.Cleanup(func() { c.close(t) })
	return c
}

// stopBound bounds how long the end of a test waits for the worker to
// stop: a handler that ignores its context may never return.
const stopBound = 10 * time.Second

// close stops the worker, within stopBound, and closes the store.
func (c *Client) close(t testing.TB) {
	t.Helper()
	if c.isStarted() {
		ctx, cancel := context.WithTimeout(context.Background(), stopBound)
		defer cancel()
		stopped := make(chan error, 1)
		go func() { stopped <- c.Stop(ctx) }()
		select {
		case err := <-stopped:
			if err != nil && !t.Failed() {
				t.Errorf("grittest: stop the worker: %v", err)
			}
		case <-time.After(stopBound + time.Second):
			t.Errorf("grittest: the worker did not stop within %v: a handler ignores the end of its context", stopBound)
			return // the store stays open under the handler that still runs
		}
	}
	if err := c.h.Close(); err != nil {
		t.Errorf("grittest: close the test's store: %v", err)
	}
}

// Start starts the worker; Work starts it when it is not started yet.
func (c *Client) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("grittest: the worker is started already")
	}
	if err := c.Client.Start(ctx); err != nil {
		return err
	}
	c.started = true
	return nil
}

func (c *Client) isStarted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// start starts the worker once, failing the test if it cannot.
func (c *Client) start(t testing.TB) {
	t.Helper()
	if c.isStarted() {
		return
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("grittest: start the worker: %v", err)
	}
}

// Now is the time on the test's clock.
func (c *Client) Now() time.Time { return c.h.fc.Now() }

// Advance moves the test's clock on by d: what falls due (a retry, a
// snooze, a receive's timeout) can then be worked. The clock never goes
// back.
func (c *Client) Advance(d time.Duration) { c.h.fc.Advance(d) }

// AdvanceTo moves the test's clock to at, if at is later than now.
func (c *Client) AdvanceTo(at time.Time) { c.h.fc.Set(at) }
