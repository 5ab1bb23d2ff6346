package server

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/autotimeout"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/metrics"
	"github.com/grit-run/grit/store"
)

// Config configures a Server. Zero fields mean the documented defaults.
type Config struct {
	// Store is where the tasks are; required.
	Store store.Store
	// Tokens are the bearer tokens the server accepts (see LoadTokens).
	// None turns authentication off, which Serve allows only on a loopback
	// address (see Insecure).
	Tokens []Token
	// CertFile and KeyFile, both or neither, are a PEM certificate (with
	// its chain) and key: the server then speaks TLS.
	CertFile, KeyFile string

	// MaxPayload bounds a task's args and an event's payload, in bytes;
	// default 1 MiB (DefaultMaxPayload). (A worker's report of an
	// attempt's output and error is bounded at 64 KiB: their tails.)
	MaxPayload int
	// MaxBatch bounds the tasks of an EnqueueBatch, the events of a
	// Publish, and the tasks, kinds and leases of a worker's request;
	// default 1000 (DefaultMaxBatch).
	MaxBatch int
	// MaxMessage bounds a request as gRPC reads it, in bytes. By default
	// it follows MaxBatch and MaxPayload: room for MaxBatch items of
	// MaxPayload each with their names (4 KiB an item), but at most
	// 16 MiB (DefaultMaxMessage), since the server holds each request in
	// flight whole (a batch whose args pass it is split by the client);
	// and at least MaxPayload + 1 MiB, so that a request with one payload
	// over MaxPayload is read and answered INVALID_ARGUMENT naming the
	// field. A request larger than MaxMessage is refused without being
	// decoded: INVALID_ARGUMENT, reason MESSAGE_TOO_LARGE; gRPC reads
	// requests up to twice MaxMessage so that the server answers them, and
	// refuses a larger one unread, RESOURCE_EXHAUSTED. A request within it with more
	// than MaxBatch items is refused INVALID_ARGUMENT without decoding
	// more than MaxBatch + 1 of them (countingCodec).
	MaxMessage int
	// MaxAnswer bounds the args the tasks of one answer carry (List,
	// Claim), in bytes; default 3 MiB, so that an answer fits gRPC's
	// default 4 MiB receive limit. A List stops its page early; a Claim
	// gives back (without using an attempt) the tasks that do not fit. One
	// task always comes: a client whose tasks' args are larger must raise
	// its own limit.
	MaxAnswer int
	// MaxInFlight, when set, bounds the requests the server reads and
	// works at once, so that their memory is bounded by about MaxInFlight
	// × 2 × MaxMessage whoever calls. A call beyond it is refused before its
	// message is read: RESOURCE_EXHAUSTED, saying the server is busy (a
	// client retries it with backoff, as grit's does). A Claim waiting for
	// work is not counted: it holds a small request for as long as it
	// waits, and a fleet's waiting claims must not shut out its reports.
	// Nor are the health service's probes. Zero: no bound, since the
	// right one depends on the fleet (a worker that reports each task by
	// its own call has as many calls in flight as tasks running).
	MaxInFlight int

	// Lease is the lease of a claim or heartbeat that asks for none;
	// default 15s.
	Lease time.Duration
	// Poll is the longest a waiting Claim sleeps before it looks for due
	// tasks again when nothing woke it (a task enqueued through another
	// process, on a store that cannot notify); default gate.DefaultPoll.
	Poll time.Duration
	// Rescue is how often Serve takes over the tasks of workers whose
	// leases expired, and decides each by its policy's interrupted rule, as
	// Go workers do; default 5s (DefaultRescue). A task whose remote
	// worker died is claimable again within its lease plus Rescue.
	// Negative: never (the Go workers of the fleet do it).
	Rescue time.Duration
	// Schedules is how often Serve ticks the store's schedules (see
	// docs/schedules.md), as every Go worker does, so that a fleet of
	// remote workers has its schedules too; default a second. Negative:
	// never.
	Schedules time.Duration
	// ID names the server in the store when it rescues tasks; default
	// grit-server-HOST-PID.
	ID string
	// StopGrace bounds how long Serve, when its context ends, waits for the
	// requests in flight before it closes their connections; default 10s.
	StopGrace time.Duration

	// Protection is how remote workers' claims protect the downstreams of
	// their tasks' groups, as a Go worker's do (engine.Config): breakers,
	// resource pressure and retry budgets.
	gate.Protection
	// Alerting is where alerts go: a remote worker's task dead-lettered
	// (or one the server's rescue dead-lettered), a breaker its results
	// opened. Serve delivers those still waiting, when it stops, within
	// StopGrace.
	alert.Alerting
	// Metrics, if set, counts what the server's remote workers do as a Go
	// worker's engine counts its own (see package metrics): their
	// attempts, claims, rescues and stale results, and the tasks enqueued
	// through the API.
	Metrics *metrics.Metrics
	// TracerProvider, if set, makes a producer span for each task enqueued
	// through the API, whose context the store keeps with the task (see
	// package grit's Config.TracerProvider).
	TracerProvider trace.TracerProvider
	// AutoTimeouts is how a claim's answer sets the timeout of a task
	// that asks for an auto timeout, as a Go worker's engine does
	// (engine.Config).
	AutoTimeouts autotimeout.Settings

	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultMaxPayload = 1 << 20
	DefaultMaxBatch   = 1000
	DefaultMaxMessage = 16 << 20
	DefaultMaxAnswer  = 3 << 20
	DefaultRescue     = 5 * time.Second
)

// itemRoom is what an item of a batch takes on the wire beside its
// payload, generously: its names (kind, queue, group, key, policy, name,
// tenant, each up to 200 characters), times and tags.
const itemRoom = 4 << 10

// defaultMaxMessage is MaxMessage's default for payload and batch limits:
// batch items of payload bytes and their names, within DefaultMaxMessage
// and at least payload + 1 MiB.
func defaultMaxMessage(payload, batch int) int {
	room := DefaultMaxMessage
	if payload+itemRoom <= DefaultMaxMessage/batch {
		room = batch * (payload + itemRoom)
	}
	return max(room, payload+1<<20)
}

// ErrConfig is wrapped by the errors of a Config that cannot serve.
var ErrConfig = errors.New("server: bad config")

func (c *Config) validate() error {
	switch {
	case c.Store == nil:
		return fmt.Errorf("%w: no store", ErrConfig)
	case c.MaxPayload < 0 || c.MaxBatch < 0 || c.MaxMessage < 0 || c.MaxAnswer < 0 || c.MaxInFlight < 0:
		return fmt.Errorf("%w: negative max payload, batch, message, answer or requests in flight", ErrConfig)
	case c.Lease < 0 || c.Poll < 0 || c.StopGrace < 0:
		return fmt.Errorf("%w: negative lease, poll or stop grace", ErrConfig)
	case c.Lease != 0 && (c.Lease < minLease || c.Lease > maxLease):
		return fmt.Errorf("%w: lease %v: want %v to %v", ErrConfig, c.Lease, minLease, maxLease)
	case (c.CertFile == "") != (c.KeyFile == ""):
		return fmt.Errorf("%w: TLS needs both a certificate file and a key file (got %q and %q)", ErrConfig, c.CertFile, c.KeyFile)
	case c.MaxMessage != 0 && c.MaxPayload != 0 && c.MaxMessage <= c.MaxPayload:
		return fmt.Errorf("%w: max message %d must be larger than max payload %d", ErrConfig, c.MaxMessage, c.MaxPayload)
	}
	if err := c.Protection.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := c.Alerting.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := c.AutoTimeouts.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	for i, t := range c.Tokens {
		if err := t.Check(); err != nil {
			return fmt.Errorf("%w: token %d: %w", ErrConfig, i+1, err)
		}
	}
	return nil
}

func (c *Config) setDefaults() {
	c.MaxPayload = cmp.Or(c.MaxPayload, DefaultMaxPayload)
	c.MaxBatch = cmp.Or(c.MaxBatch, DefaultMaxBatch)
	c.MaxMessage = cmp.Or(c.MaxMessage, defaultMaxMessage(c.MaxPayload, c.MaxBatch))
	c.MaxAnswer = cmp.Or(c.MaxAnswer, DefaultMaxAnswer)
	c.Lease = cmp.Or(c.Lease, gate.DefaultLease)
	c.Poll = cmp.Or(c.Poll, gate.DefaultPoll)
	c.Rescue = cmp.Or(c.Rescue, DefaultRescue)
	c.Schedules = cmp.Or(c.Schedules, time.Second)
	c.StopGrace = cmp.Or(c.StopGrace, 10*time.Second)
	c.Protection = c.Protection.WithDefaults()
	if c.ID == "" {
		host, _ := os.Hostname()
		c.ID = fmt.Sprintf("grit-server-%s-%d", host, os.Getpid())
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}
