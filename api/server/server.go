package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/internal/tracing"
	"github.com/grit-run/grit/store"
)

// Server serves grit's gRPC API on a store.
type Server struct {
	cfg    Config
	lim    limits
	tokens *TokenSet
	creds  credentials.TransportCredentials // nil: no TLS
	health *health.Server
	wake   *notifier

	// stopping is closed when Serve stops: waiting claims answer at once.
	stopping chan struct{}
	stopOnce sync.Once

	seenMu sync.Mutex
	seen   map[string]bool // workers registered by this server

	// gate is the downstream protection of remote workers' claims, with a
	// ledger for each remote worker, and the rescue of expired leases.
	gate *gate.Gate
	// alerts carries the gate's alerts (Config.Alerting).
	alerts *alert.Alerter
	tracer *tracing.Tracer // nil: no spans
	spans  *attemptSpans   // the remote attempts' spans
	auto   *autoTimeouts   // the auto timeouts claims gave
	quar   quarTallies     // what remote attempts set aside, for their alerts
	// refused holds the requests the codec refused to decode, malformed
	// or over the limit, until the interceptor answers them
	// (countingCodec).
	refused sync.Map
	// inFlight holds a place for each request being read or worked
	// (Config.MaxInFlight); tap takes them. Nil: no bound.
	inFlight chan struct{}
}

// New returns a server for cfg; it reads the TLS certificate, if any.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	s := &Server{
		cfg:      cfg,
		tracer:   tracing.New(cfg.TracerProvider),
		spans:    newAttemptSpans(tracing.New(cfg.TracerProvider)),
		lim:      limits{maxPayload: cfg.MaxPayload, maxBatch: cfg.MaxBatch},
		tokens:   NewTokenSet(cfg.Tokens),
		health:   health.NewServer(),
		wake:     newNotifier(),
		stopping: make(chan struct{}),
		seen:     map[string]bool{},
	}
	if cfg.MaxInFlight > 0 {
		s.inFlight = make(chan struct{}, cfg.MaxInFlight)
	}
	s.alerts = alert.New(cfg.Alerting, cfg.Logger, cfg.Metrics.AlertsDropped)
	g, err := gate.New(gate.Config{Store: cfg.Store, Protection: cfg.Protection, Logger: cfg.Logger, OnChange: s.wake.notify, Alert: s.alerts.Send, Metrics: cfg.Metrics})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	s.gate = g
	s.auto = newAutoTimeouts(cfg.Store, cfg.AutoTimeouts)
	if cfg.CertFile != "" {
		creds, err := credentials.NewServerTLSFromFile(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: TLS certificate %s and key %s: %w", ErrConfig, cfg.CertFile, cfg.KeyFile, err)
		}
		s.creds = creds
	}
	return s, nil
}

// Services are the names of grit's services, as the health service and
// reflection list them.
var Services = []string{pb.TasksService_ServiceDesc.ServiceName, pb.WorkersService_ServiceDesc.ServiceName}

// ServerOptions are the options a grpc.Server needs to serve this API:
// authentication (a tap handle, which refuses a call without a valid
// token before its message is read, and the interceptors), the request
// size limit, a codec that decodes no more than the batch limit's items
// of a request (see countingCodec), and TLS when configured. A grpc.Server takes one tap handle,
// so they do not go with another of the caller's.
func (s *Server) ServerOptions() []grpc.ServerOption {
	opts := []grpc.ServerOption{
		grpc.InTapHandle(s.tap),
		grpc.ChainUnaryInterceptor(s.unary),
		grpc.ChainStreamInterceptor(s.stream),
		grpc.MaxRecvMsgSize(readLimit(s.cfg.MaxMessage)),
		grpc.ForceServerCodecV2(countingCodec{max: s.cfg.MaxBatch, limit: s.cfg.MaxMessage, refused: &s.refused}),
	}
	if s.creds != nil {
		opts = append(opts, grpc.Creds(s.creds))
	}
	return opts
}

// Register registers the TasksService and WorkersService, the health service
// (SERVING for "" and each of Services) and reflection on gs, which must
// have been made with ServerOptions.
func (s *Server) Register(gs *grpc.Server) {
	pb.RegisterTasksServiceServer(gs, &tasks{s: s})
	pb.RegisterWorkersServiceServer(gs, &workers{s: s})
	healthpb.RegisterHealthServer(gs, s.health)
	reflection.Register(gs)
	for _, name := range append([]string{""}, Services...) {
		s.health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
}

// Serve serves the API on lis until ctx ends, then stops gracefully: the
// health service turns NOT_SERVING, waiting claims answer, and requests
// in flight get Config.StopGrace to finish. It refuses a listener that
// other machines reach when the server has no tokens (see Insecure), and
// warns when it has tokens but no TLS there: they would travel in clear
// text.
// Beside the requests, it rescues the tasks of workers whose leases
// expired (Config.Rescue), ticks the store's schedules (Config.Schedules)
// and, on a store that notifies, wakes waiting claims when work is due.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	insecure, err := Insecure(lis.Addr().String(), s.cfg.Tokens)
	if err != nil {
		return err
	}
	if insecure {
		s.cfg.Logger.Warn("serving without authentication: no tokens, on a loopback address", "addr", lis.Addr().String())
	}
	if !insecure && s.creds == nil && !loopback(lis.Addr().String()) {
		s.cfg.Logger.Warn("serving without TLS on an address other machines reach: bearer tokens travel in clear text; give a certificate (--tls-cert and --tls-key, GRIT_TLS_CERT and GRIT_TLS_KEY) or put a TLS proxy in front", "addr", lis.Addr().String())
	}
	store.LogMissing(s.cfg.Logger, s.cfg.Store)
	gs := grpc.NewServer(s.ServerOptions()...)
	s.Register(gs)
	bg, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.Maintain(bg) })
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		s.stop(gs)
		if err = <-served; errors.Is(err, grpc.ErrServerStopped) {
			err = nil // ctx ended before gs began serving: stopped all the same
		}
	}
	cancel()
	wg.Wait()
	s.DrainAlerts(context.WithoutCancel(ctx))
	return err
}

// DrainAlerts delivers the alerts still waiting, within StopGrace or
// until ctx ends, and drops the rest (logged); alerts raised after it are
// dropped. Serve calls it when it stops; a server registered on a
// grpc.Server of the caller's should, after stopping that.
func (s *Server) DrainAlerts(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StopGrace)
	defer cancel()
	s.alerts.Stop(ctx)
}

// stop turns the health service NOT_SERVING, ends waiting claims, and
// stops gs gracefully within StopGrace.
func (s *Server) stop(gs *grpc.Server) {
	s.Stop()
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	t := time.NewTimer(s.cfg.StopGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.cfg.Logger.Warn("requests still in flight after the stop grace: closing their connections", "grace", s.cfg.StopGrace)
		gs.Stop()
		<-done
	}
}

// Stop turns the health service NOT_SERVING and makes waiting claims
// answer at once; for a server registered on a grpc.Server of the
// caller's, call it before stopping that.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.health.Shutdown()
		close(s.stopping)
	})
}

// Maintain runs, until ctx ends, what the server does beside answering
// requests: rescuing expired leases, ticking the store's schedules and
// listening for the store's notifications. Serve runs it; a server registered on a grpc.Server of
// the caller's should too.
func (s *Server) Maintain(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { s.listen(ctx) })
	wg.Go(func() { s.gate.FollowPauses(ctx, nil) })
	if s.cfg.Rescue > 0 {
		wg.Go(func() { s.rescueLoop(ctx) })
	}
	if s.cfg.Schedules > 0 {
		k := &sched.Ticker{Store: s.cfg.Store, Logger: s.cfg.Logger, Alert: s.alerts.Send}
		wg.Go(func() { sched.Loop(ctx, k, s.cfg.Schedules, nil, s.gate.StoreNow) })
	}
	wg.Wait()
}

// rescueLoop takes over, every Config.Rescue, the tasks whose lease
// expired (their worker died or froze), so that a fleet of remote workers
// recovers without a Go worker beside them: the gate's one rescue loop, as
// Go workers run it.
func (s *Server) rescueLoop(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	s.gate.RescueLoop(ctx, s.cfg.Rescue, store.RescueRequest{Worker: s.cfg.ID, Lease: s.cfg.Lease}, nil)
}
