package server_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

// testToken is the token the harness's server accepts when it has one.
const testToken = "test-token-0123456789abcdef"

// harness is a real server on 127.0.0.1 on a SQLite store, and clients.
type harness struct {
	store   *sqlite.Store
	server  *server.Server
	addr    string
	conn    *grpc.ClientConn
	tasks   pb.TasksServiceClient
	workers pb.WorkersServiceClient
}

// start serves cfg (its Store set to a new SQLite file) until the test
// ends; the clients send token, if any.
func start(t *testing.T, cfg server.Config, token string) *harness {
	t.Helper()
	return startOn(t, cfg, token, nil)
}

// startOn is start with the server's store wrapped by wrap, if not nil.
func startOn(t *testing.T, cfg server.Config, token string, wrap func(store.Store) store.Store) *harness {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg.Store = st
	if wrap != nil {
		cfg.Store = wrap(st)
	}
	h := serve(t, cfg, token)
	h.store = st
	return h
}

// serve serves cfg, on its own store, until the test ends; the clients
// send token, if any. The harness's store is left nil.
func serve(t *testing.T, cfg server.Config, token string) *harness {
	t.Helper()
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("Serve did not return after its context ended")
		}
	})
	h := &harness{server: s, addr: lis.Addr().String()}
	h.conn = dial(t, h.addr, token)
	h.tasks, h.workers = pb.NewTasksServiceClient(h.conn), pb.NewWorkersServiceClient(h.conn)
	return h
}

func dial(t *testing.T, addr, token string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	if len(opts) == 0 {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(token)))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// bearer sends a token, also without TLS (the tests run on loopback).
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}
func (b bearer) RequireTransportSecurity() bool { return false }

// ctx bounds one call.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// count is how many tasks the store has.
func (h *harness) count(t *testing.T) int {
	t.Helper()
	ts, err := h.store.ListTasks(ctx(t), task.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(ts)
}

func (h *harness) enqueue(t *testing.T, n *pb.NewTask) *pb.Task {
	t.Helper()
	r, err := h.tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: n})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetTask()
}

func (h *harness) get(t *testing.T, id int64) *pb.Task {
	t.Helper()
	r, err := h.tasks.Get(ctx(t), &pb.GetRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetTask()
}

// claimOne claims one task of kind for worker, waiting up to 10s for it
// to be due.
func (h *harness) claimOne(t *testing.T, worker, kind string) *pb.Task {
	t.Helper()
	r, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: worker, Kinds: []string{kind}, Wait: dpb(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetTasks()) != 1 {
		t.Fatalf("claimed %d tasks, want 1", len(r.GetTasks()))
	}
	return r.GetTasks()[0]
}

func (h *harness) attempts(t *testing.T, id int64) []task.Attempt {
	t.Helper()
	as, err := h.store.Attempts(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// wantCode checks err's code and that its message says each of says.
func wantCode(t *testing.T, err error, code codes.Code, says ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("got %v, want code %v", err, code)
	}
	msg := status.Convert(err).Message()
	for _, s := range says {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q does not say %q", msg, s)
		}
	}
}

// violation is the field of err's BadRequest detail.
func violation(err error) (string, error) {
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField(), nil
		}
	}
	return "", errors.New("no BadRequest detail")
}

func dpb(d time.Duration) *durationpb.Duration { return durationpb.New(d) }
