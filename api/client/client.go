package client

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/batch"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/retry/grpcretry"
)

// Client talks to a grit server. Make one with Dial; it is safe for
// concurrent use. Close it to flush what Send has buffered.
type Client struct {
	cfg     Config
	conn    *grpc.ClientConn
	tasks   gritv1.TasksServiceClient
	workers gritv1.WorkersServiceClient
	batcher *batch.Batcher[*gritv1.NewTask, Enqueued]
	reports *batch.Batcher[workerResult, Reported]
}

// Dial returns a client of the server at cfg.Addr. It does not wait for
// the server: the first call connects. opts are added to the client's own
// dial options (tests add interceptors).
func Dial(cfg Config, opts ...grpc.DialOption) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	creds, err := transport(cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg}
	dial := []grpc.DialOption{grpc.WithTransportCredentials(creds), grpc.WithChainUnaryInterceptor(c.unary), grpc.WithStatsHandler(budgetStats{})}
	if cfg.SendRetries >= 0 {
		sc, err := grpcretry.Default().JSON()
		if err != nil {
			return nil, err
		}
		dial = append(dial, grpc.WithDefaultServiceConfig(sc))
	} else {
		dial = append(dial, grpc.WithDisableRetry())
	}
	conn, err := grpc.NewClient(cfg.Addr, append(dial, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", cfg.Addr, err)
	}
	c.conn, c.tasks, c.workers = conn, gritv1.NewTasksServiceClient(conn), gritv1.NewWorkersServiceClient(conn)
	c.batcher, err = batch.New(batch.Config[*gritv1.NewTask, Enqueued]{
		Flush: c.flush, MaxSize: cfg.MaxBatchSize, Interval: cfg.FlushInterval,
		Timeout: -1, // the call layer bounds each attempt
		Retries: cfg.SendRetries, Retryable: callRetryable,
		Backoff: retry.Exponential{Min: cfg.SendBackoff, Max: 4 * cfg.SendBackoff, Jitter: retry.JitterEqual},
	})
	if err == nil {
		c.reports, err = batch.New(batch.Config[workerResult, Reported]{
			Flush: c.flushReports, MaxSize: cfg.ReportBatchSize, Interval: cfg.ReportInterval,
			Timeout: -1, Retries: cfg.SendRetries, Retryable: callRetryable,
			Backoff: retry.Exponential{Min: cfg.SendBackoff, Max: 4 * cfg.SendBackoff, Jitter: retry.JitterEqual},
		})
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

func transport(cfg Config) (credentials.TransportCredentials, error) {
	if !cfg.TLS {
		return insecure.NewCredentials(), nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("client: CA file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client: CA file %s holds no PEM certificate", cfg.CAFile)
		}
	}
	return credentials.NewTLS(tc), nil
}

// Tasks and Workers are the generated clients, with the client's retry
// layers and token.
func (c *Client) Tasks() gritv1.TasksServiceClient     { return c.tasks }
func (c *Client) Workers() gritv1.WorkersServiceClient { return c.workers }

// withKey returns t with an idempotency key: the caller's, or a new one,
// so that every retry of this write names the same task.
func withKey(t *gritv1.NewTask) *gritv1.NewTask {
	if t.GetIdempotencyKey() != "" {
		return t
	}
	t = proto.Clone(t).(*gritv1.NewTask)
	var b [16]byte
	rand.Read(b[:])
	t.IdempotencyKey = "client:" + hex.EncodeToString(b[:])
	return t
}

// Enqueued is a task as the server answered its enqueue: the task, and
// whether it existed already (its idempotency key was taken by the same
// work, or by a retry of this call that went through) rather than being
// created by this call.
type Enqueued struct {
	Task    *gritv1.Task
	Existed bool
}

// Enqueue inserts one task now, in one call (with the channel and call
// layers' retries). A task without an idempotency key gets one, so a retry
// never makes a second task. A key already taken by other work (another
// kind or other args) fails with ALREADY_EXISTS, unless the task says
// ReturnExisting.
func (c *Client) Enqueue(ctx context.Context, t *gritv1.NewTask) (Enqueued, error) {
	resp, err := c.tasks.Enqueue(ctx, &gritv1.EnqueueRequest{Task: withKey(t)})
	if err != nil {
		return Enqueued{}, fmt.Errorf("client: enqueue %s: %w", t.GetKind(), err)
	}
	return Enqueued{Task: resp.GetTask(), Existed: resp.GetExisted()}, nil
}

// Send buffers a task for a batched enqueue and returns its future: the
// task as the server stored it, or why it was not. Batches go out at
// MaxBatchSize tasks or FlushInterval after their first; a batch that
// fails with DEADLINE_EXCEEDED, UNAVAILABLE or INTERNAL is retried as a
// whole; a rejection fails the batch's futures and the next batch goes
// on. Send blocks while too many tasks wait (ten batches' worth).
func (c *Client) Send(ctx context.Context, t *gritv1.NewTask) *batch.Future[Enqueued] {
	return c.batcher.Send(ctx, withKey(t))
}

func (c *Client) flush(ctx context.Context, ts []*gritv1.NewTask) ([]Enqueued, error) {
	resp, err := c.tasks.EnqueueBatch(ctx, &gritv1.EnqueueBatchRequest{Tasks: ts})
	if err != nil {
		return nil, fmt.Errorf("client: enqueue a batch of %d: %w", len(ts), err)
	}
	got, existed := resp.GetTasks(), resp.GetExisted()
	out := make([]Enqueued, len(got))
	for i, t := range got {
		out[i] = Enqueued{Task: t, Existed: i < len(existed) && existed[i]}
	}
	return out, nil
}

// Get returns a task.
func (c *Client) Get(ctx context.Context, id int64) (*gritv1.Task, error) {
	resp, err := c.tasks.Get(ctx, &gritv1.GetRequest{Id: id})
	if err != nil {
		return nil, fmt.Errorf("client: get task %d: %w", id, err)
	}
	return resp.GetTask(), nil
}

// Cancel cancels a task that has not ended; a task already cancelled is
// returned as it is.
func (c *Client) Cancel(ctx context.Context, id int64) (*gritv1.Task, error) {
	resp, err := c.tasks.Cancel(ctx, &gritv1.CancelRequest{Id: id})
	if err != nil {
		return nil, fmt.Errorf("client: cancel task %d: %w", id, err)
	}
	return resp.GetTask(), nil
}

// SendToTask keeps payload (JSON; nil for null) as a message on topic
// for task id, until a handler of the task receives it (grit.Receive);
// the server writes it to the audit log. Each call keeps one: a call
// retried after a lost answer keeps two.
func (c *Client) SendToTask(ctx context.Context, id int64, topic string, payload []byte) (*gritv1.TaskMessage, error) {
	if payload == nil {
		payload = []byte("null")
	}
	resp, err := c.tasks.SendToTask(ctx, &gritv1.SendToTaskRequest{TaskId: id, Topic: topic, Payload: payload})
	if err != nil {
		return nil, fmt.Errorf("client: send to task %d on %q: %w", id, topic, err)
	}
	return resp.GetMessage(), nil
}

// Close flushes what Send and SendResult buffered (bounded by ctx) and closes the
// connection.
func (c *Client) Close(ctx context.Context) error {
	err := errors.Join(c.batcher.Close(ctx), c.reports.Close(ctx))
	return errors.Join(err, c.conn.Close())
}

// Code is the gRPC code of an error from the client (codes.OK for nil).
func Code(err error) codes.Code { return status.Code(err) }
