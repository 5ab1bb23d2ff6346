package grpcretry

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/grit-run/grit/retry"
)

// flakyServer is a real gRPC server on loopback whose health service fails
// its first fails calls with code, then answers. calls counts what it saw.
type flakyServer struct {
	addr  string
	calls atomic.Int64
}

func startFlaky(t *testing.T, fails int64, code codes.Code) *flakyServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := &flakyServer{addr: lis.Addr().String()}
	fail := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if fs.calls.Add(1) <= fails {
			return nil, status.Error(code, "flaky server says no")
		}
		return next(ctx, req)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(fail))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return fs
}

// check dials addr with cfg as the channel's service config and makes one
// health check, bounded by a timeout so a broken retry loop cannot hang.
func check(t *testing.T, addr string, cfg ServiceConfig) error {
	t.Helper()
	js, err := cfg.JSON()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(js))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

// fast is Default with backoffs short enough to keep the tests quick.
func fast() ServiceConfig {
	c := Default()
	c.InitialBackoff, c.MaxBackoff = time.Millisecond, 5*time.Millisecond
	return c
}

func TestChannelRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cfg       ServiceConfig
		fails     int64
		code      codes.Code
		wantCode  codes.Code
		wantCalls int64
		wantClass retry.Class
	}{
		{"default absorbs two UNAVAILABLE", Default(), 2, codes.Unavailable, codes.OK, 3, retry.Unclassified},
		{"INVALID_ARGUMENT is not retried", Default(), 1, codes.InvalidArgument, codes.InvalidArgument, 1, retry.ClassPermanent},
		{"INTERNAL is left to the call layer", Default(), 1, codes.Internal, codes.Internal, 1, retry.ClassTransient},
		{"attempts run out", fast(), 100, codes.Unavailable, codes.Unavailable, 5, retry.ClassTransient},
		{"named service", func() ServiceConfig { c := fast(); c.Services = []string{"grpc.health.v1.Health"}; return c }(),
			2, codes.DeadlineExceeded, codes.OK, 3, retry.Unclassified},
		{"other service", func() ServiceConfig { c := fast(); c.Services = []string{"grit.v1.TasksService"}; return c }(),
			2, codes.Unavailable, codes.Unavailable, 1, retry.ClassTransient},
		{"throttled", func() ServiceConfig { c := fast(); c.Throttle = &Throttle{MaxTokens: 4, TokenRatio: 0.1}; return c }(),
			100, codes.Unavailable, codes.Unavailable, 2, retry.ClassTransient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := startFlaky(t, tt.fails, tt.code)
			err := check(t, srv.addr, tt.cfg)
			if got := status.Code(err); got != tt.wantCode {
				t.Fatalf("call ended with %v (%v), want %v", got, err, tt.wantCode)
			}
			if got := srv.calls.Load(); got != tt.wantCalls {
				t.Errorf("server saw %d calls, want %d", got, tt.wantCalls)
			}
			if class, _ := retry.Classify(Classify(err)); class != tt.wantClass {
				t.Errorf("class = %v, want %v", class, tt.wantClass)
			}
		})
	}
}

func TestClientCancelIsCanceled(t *testing.T) {
	t.Parallel()
	srv := startFlaky(t, 0, codes.OK)
	conn, err := grpc.NewClient("passthrough:///"+srv.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if class, _ := retry.Classify(Classify(err)); class != retry.ClassCanceled {
		t.Errorf("a call on a canceled context: class %v (%v), want canceled", class, err)
	}
}
