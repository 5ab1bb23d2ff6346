package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/api/server"
	"github.com/grit-run/grit/internal/testcert"
	"github.com/grit-run/grit/store/sqlite"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{Tokens: operators("another-token-0123456789", testToken)}, "")
	call := func(auth string) error {
		c := ctx(t)
		if auth != "" {
			c = metadata.AppendToOutgoingContext(c, "authorization", auth)
		}
		_, err := h.tasks.Enqueue(c, &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "k"}})
		return err
	}
	wantCode(t, call(""), codes.Unauthenticated, "no token", "authorization: Bearer TOKEN", "GRIT_TOKENS")
	wantCode(t, call("Bearer not-the-token-0123456789"), codes.Unauthenticated, "not one this server accepts")
	wantCode(t, call("Basic "+testToken), codes.Unauthenticated, `not "Bearer TOKEN"`)
	wantCode(t, call("Bearer "), codes.Unauthenticated, `not "Bearer TOKEN"`)
	if c := h.count(t); c != 0 {
		t.Fatalf("refused requests wrote %d tasks", c)
	}
	if err := call("Bearer " + testToken); err != nil {
		t.Fatal(err)
	}
	if err := call("bearer " + testToken); err != nil {
		t.Fatalf("the scheme's case: %v", err)
	}
	if c := h.count(t); c != 2 {
		t.Fatalf("%d tasks, want 2", c)
	}
	// Workers' calls need the token too.
	_, err := h.workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "w", Kinds: []string{"k"}})
	wantCode(t, err, codes.Unauthenticated, "no token")
}

// TestTokenBeforeMessage: a call without a valid token is refused from its
// headers, before its message is read: one over the receive limit is
// UNAUTHENTICATED, not refused for its size, unless it has the token.
func TestTokenBeforeMessage(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{Tokens: operators(testToken), MaxPayload: 1 << 10, MaxMessage: 4 << 10}, "")
	req := &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "k", Args: []byte(`"` + strings.Repeat("x", 8<<10) + `"`)}}
	_, err := h.tasks.Enqueue(ctx(t), req)
	wantCode(t, err, codes.Unauthenticated, "no token")
	_, err = h.tasks.Enqueue(metadata.AppendToOutgoingContext(ctx(t), "authorization", "Bearer not-the-token-0123456789"), req)
	wantCode(t, err, codes.Unauthenticated, "not one this server accepts")
	_, err = pb.NewTasksServiceClient(dial(t, h.addr, testToken)).Enqueue(ctx(t), req)
	wantCode(t, err, codes.ResourceExhausted) // over twice the limit: gRPC refuses it unread
}

// TestClearTextWarning: a server with tokens but without TLS, on an
// address other machines reach, warns that the tokens travel in clear
// text; on loopback or with TLS it does not.
func TestClearTextWarning(t *testing.T) {
	t.Parallel()
	cert, key, _ := testcert.Write(t, t.TempDir())
	st, err := sqlite.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tt := range []struct {
		addr      string
		tls, warn bool
	}{
		{"0.0.0.0:0", false, true},
		{"127.0.0.1:0", false, false},
		{"0.0.0.0:0", true, false},
	} {
		var log strings.Builder
		cfg := server.Config{Store: st, Tokens: operators(testToken), Logger: slog.New(slog.NewTextHandler(&log, nil))}
		if tt.tls {
			cfg.CertFile, cfg.KeyFile = cert, key
		}
		s, err := server.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		lis, err := net.Listen("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // Serve logs as it starts, then stops at once
		if err := s.Serve(ctx, lis); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(log.String(), "bearer tokens travel in clear text"); got != tt.warn {
			t.Errorf("%s, TLS %v: warned %v, want %v:\n%s", tt.addr, tt.tls, got, tt.warn, log.String())
		}
	}
}

// TestHealthAndReflection: a probe needs no token; reflection does, and
// lists grit's services.
func TestHealthAndReflection(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{Tokens: operators(testToken)}, "")
	for _, svc := range append([]string{""}, server.Services...) {
		r, err := healthpb.NewHealthClient(h.conn).Check(ctx(t), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health of %q: %v, %v", svc, r, err)
		}
	}
	_, err := listServices(ctx(t), h.conn)
	wantCode(t, err, codes.Unauthenticated)
	names, err := listServices(ctx(t), dial(t, h.addr, testToken))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"grit.v1.TasksService", "grit.v1.WorkersService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v, without %s", names, want)
		}
	}
}

// TestReadOnlyTokenOnlyReads: a read-only token lists and gets tasks and
// describes the API; enqueueing, cancelling, redriving and working tasks are
// PERMISSION_DENIED, with a message that says why.
func TestReadOnlyTokenOnlyReads(t *testing.T) {
	t.Parallel()
	const reader = "reader-token-0123456789"
	h := start(t, server.Config{Tokens: []server.Token{{Value: testToken}, {Value: reader, Role: server.RoleReadOnly}}}, testToken)
	tk := h.enqueue(t, &pb.NewTask{Kind: "k"})
	conn := dial(t, h.addr, reader)
	tasks, workers := pb.NewTasksServiceClient(conn), pb.NewWorkersServiceClient(conn)
	if _, err := tasks.Get(ctx(t), &pb.GetRequest{Id: tk.GetId()}); err != nil {
		t.Fatalf("get with a read-only token: %v", err)
	}
	if _, err := tasks.List(ctx(t), &pb.ListRequest{}); err != nil {
		t.Fatalf("list with a read-only token: %v", err)
	}
	if _, err := listServices(ctx(t), conn); err != nil {
		t.Fatalf("reflection with a read-only token: %v", err)
	}
	if _, err := h.tasks.Send(ctx(t), &pb.SendRequest{Machine: "m", Key: "k", Event: "e"}); err != nil {
		t.Fatalf("send with an operator's token: %v", err)
	}
	if _, err := tasks.Instance(ctx(t), &pb.InstanceRequest{Machine: "m", Key: "k"}); err != nil {
		t.Fatalf("instance with a read-only token: %v", err)
	}
	_, err := tasks.Send(ctx(t), &pb.SendRequest{Machine: "m", Key: "k", Event: "e"})
	wantCode(t, err, codes.PermissionDenied, "read-only")
	_, err = tasks.Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "k"}})
	wantCode(t, err, codes.PermissionDenied)
	if !strings.Contains(err.Error(), "read-only") {
		t.Errorf("the refusal does not say the token is read-only: %v", err)
	}
	_, err = tasks.Cancel(ctx(t), &pb.CancelRequest{Id: tk.GetId()})
	wantCode(t, err, codes.PermissionDenied)
	_, err = tasks.Redrive(ctx(t), &pb.RedriveRequest{RunId: 1})
	wantCode(t, err, codes.PermissionDenied, "read-only")
	_, err = workers.Claim(ctx(t), &pb.ClaimRequest{WorkerId: "w", Kinds: []string{"k"}, Limit: 1})
	wantCode(t, err, codes.PermissionDenied)
	if got := h.get(t, tk.GetId()); got.GetState() != pb.TaskState_TASK_STATE_READY {
		t.Errorf("task %v after the refused calls, want READY", got)
	}
}

func listServices(ctx context.Context, conn *grpc.ClientConn) ([]string, error) {
	st, err := reflectpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, err
	}
	// A stream the server refused may fail its Send with io.EOF; its
	// status comes with the Recv.
	if err := st.Send(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{}}); err != nil && err != io.EOF {
		return nil, err
	}
	r, err := st.Recv()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range r.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	return names, st.CloseSend()
}

// TestStopNotServing: Stop turns the health service NOT_SERVING, for a
// server registered on a grpc.Server of the caller's.
func TestStopNotServing(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	s, err := server.New(server.Config{Store: h.store})
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(s.ServerOptions()...)
	s.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	hc := healthpb.NewHealthClient(dial(t, lis.Addr().String(), ""))
	r, err := hc.Check(ctx(t), &healthpb.HealthCheckRequest{})
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("before Stop: %v, %v", r, err)
	}
	s.Stop()
	r, err = hc.Check(ctx(t), &healthpb.HealthCheckRequest{Service: "grit.v1.TasksService"})
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("after Stop: %v, %v", r, err)
	}
}

func TestInsecure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr     string
		tokens   []server.Token
		insecure bool
		refused  bool
	}{
		{"127.0.0.1:7420", nil, true, false},
		{"127.1.2.3:7420", nil, true, false},
		{"[::1]:7420", nil, true, false},
		{"localhost:7420", nil, true, false},
		{"0.0.0.0:7420", nil, true, true},
		{":7420", nil, true, true},
		{"192.168.1.5:7420", nil, true, true},
		{"grit.example.com:7420", nil, true, true},
		{"0.0.0.0:7420", operators(testToken), false, false},
	}
	for _, tt := range tests {
		insecure, err := server.Insecure(tt.addr, tt.tokens)
		if insecure != tt.insecure || (err != nil) != tt.refused {
			t.Errorf("Insecure(%q, %v) = %v, %v", tt.addr, tt.tokens, insecure, err)
		}
		if err != nil && (!errors.Is(err, server.ErrNoTokens) || !strings.Contains(err.Error(), "GRIT_TOKENS") || !strings.Contains(err.Error(), "127.0.0.1")) {
			t.Errorf("Insecure(%q): the error does not say how to fix it: %v", tt.addr, err)
		}
	}
}

// publicListener pretends to listen on every interface.
type publicListener struct{ net.Listener }

func (publicListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4zero, Port: 7420} }

// unserved is a server without tokens on h's store, and a loopback
// listener for it, not yet served.
func unserved(t *testing.T, h *harness) (*server.Server, net.Listener) {
	t.Helper()
	s, err := server.New(server.Config{Store: h.store})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	return s, lis
}

func TestServeRefusesPublicWithoutTokens(t *testing.T) {
	t.Parallel()
	s, lis := unserved(t, start(t, server.Config{}, ""))
	err := s.Serve(ctx(t), publicListener{lis})
	if !errors.Is(err, server.ErrNoTokens) {
		t.Fatalf("Serve on 0.0.0.0 without tokens: %v", err)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	cert, key, pool := selfSigned(t)
	h := start(t, server.Config{CertFile: cert, KeyFile: key, Tokens: operators(testToken)}, "")
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "localhost"})
	conn := dial(t, h.addr, testToken, grpc.WithTransportCredentials(creds))
	if _, err := pb.NewTasksServiceClient(conn).Enqueue(ctx(t), &pb.EnqueueRequest{Task: &pb.NewTask{Kind: "k"}}); err != nil {
		t.Fatal(err)
	}
	// The harness's client speaks plain text: it cannot talk to it.
	if _, err := h.tasks.Get(ctx(t), &pb.GetRequest{Id: 1}); err == nil {
		t.Fatal("a plain-text client was answered by a TLS server")
	}
	_, err := server.New(server.Config{Store: h.store, CertFile: cert})
	if !errors.Is(err, server.ErrConfig) || !strings.Contains(err.Error(), "key file") {
		t.Fatalf("a certificate without a key: %v", err)
	}
	_, err = server.New(server.Config{Store: h.store, CertFile: key, KeyFile: key})
	if !errors.Is(err, server.ErrConfig) {
		t.Fatalf("a key as the certificate: %v", err)
	}
}

// selfSigned writes a certificate for localhost and its key.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	return testcert.Write(t, t.TempDir())
}

// TestServeEndsCleanlyWhenStoppedAtOnce: a context that ends before the
// server has begun serving stops it without an error, as one that ends
// later does.
func TestServeEndsCleanlyWhenStoppedAtOnce(t *testing.T) {
	t.Parallel()
	h := start(t, server.Config{}, "")
	for i := range 20 {
		s, lis := unserved(t, h)
		done, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Serve(done, lis); err != nil {
			t.Fatalf("Serve %d with its context ended: %v", i, err)
		}
	}
}
