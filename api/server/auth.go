package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// ErrNoTokens is wrapped by Insecure's error: a server without tokens on
// an address other machines can reach.
var ErrNoTokens = errors.New("server: no tokens")

// Insecure reports whether a server listening on addr with tokens lets
// requests in without authentication: when it has no tokens. That is
// allowed only on a loopback address (127.0.0.0/8, ::1, localhost), which
// only this machine reaches; on any other address Insecure returns an
// error wrapping ErrNoTokens that says how to set tokens.
func Insecure(addr string, tokens []Token) (bool, error) {
	if len(tokens) > 0 {
		return false, nil
	}
	if loopback(addr) {
		return true, nil
	}
	return true, fmt.Errorf("%w: listening on %s without tokens would let anyone who reaches it enqueue and cancel tasks: give tokens (%s=TOKEN1,TOKEN2, or a tokens file with one per line, e.g. --tokens-file /etc/grit/tokens), or listen on a loopback address such as 127.0.0.1:7420",
		ErrNoTokens, addr, TokensEnv)
}

// Loopback reports whether addr (host:port, or a host) is a loopback
// address, which only this machine reaches.
func Loopback(addr string) bool { return loopback(addr) }

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i] // an IPv6 zone
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// healthPrefix names the health service's methods: probes (load
// balancers, grpc-health-probe) call them without a token.
const healthPrefix = "/grpc.health.v1.Health/"

// authorize checks the request's bearer token. Both a missing token and a
// wrong one are UNAUTHENTICATED: the caller has not proved who it is
// (PERMISSION_DENIED would say it had, and may not do this); the messages
// tell them apart.
func (s *Server) authorize(ctx context.Context, method string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	return s.checkToken(method, md)
}

// tap refuses a call without a valid token from its headers alone, before
// gRPC reads its message: an unauthenticated caller costs the server
// neither the memory of a large request nor the work of decoding it. Then
// it takes the call's place among those in flight (Config.MaxInFlight,
// when set), or refuses it, still unread, when there is none; the place is given
// back when the call's stream ends, however it ends (ctx is the stream's
// and is cancelled then).
func (s *Server) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if err := s.checkToken(info.FullMethodName, info.Header); err != nil {
		return ctx, err
	}
	if s.inFlight == nil || info.FullMethodName == pb.WorkersService_Claim_FullMethodName || strings.HasPrefix(info.FullMethodName, healthPrefix) {
		return ctx, nil
	}
	select {
	case s.inFlight <- struct{}{}:
		context.AfterFunc(ctx, func() { <-s.inFlight })
		return ctx, nil
	default:
		s.cfg.Metrics.Busy()
		return ctx, refuse(info.FullMethodName, codes.ResourceExhausted, pb.ReasonServerBusy,
			fmt.Sprintf("%s: the server is busy: %d requests in flight, its limit (grit server --max-in-flight): retry after a backoff", info.FullMethodName, cap(s.inFlight)),
			map[string]string{"method": info.FullMethodName, "max_in_flight": strconv.Itoa(cap(s.inFlight))})
	}
}

func (s *Server) checkToken(method string, md metadata.MD) error {
	if s.tokens.Len() == 0 || strings.HasPrefix(method, healthPrefix) {
		return nil
	}
	meta := map[string]string{"method": method}
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return refuse(method, codes.Unauthenticated, pb.ReasonTokenMissing,
			fmt.Sprintf("%s: no token: send the header \"authorization: Bearer TOKEN\" with a token the server accepts (from its %s or tokens file)", method, TokensEnv), meta)
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return refuse(method, codes.Unauthenticated, pb.ReasonTokenMalformed, fmt.Sprintf("%s: the authorization header is not \"Bearer TOKEN\"", method), meta)
	}
	role, ok := s.tokens.Role(strings.TrimSpace(tok))
	if !ok {
		return refuse(method, codes.Unauthenticated, pb.ReasonTokenUnknown,
			fmt.Sprintf("%s: the bearer token is not one this server accepts: check it against the server's %s or tokens file", method, TokensEnv), meta)
	}
	if role == RoleReadOnly && !readMethods[method] && !strings.HasPrefix(method, reflectionPrefix) {
		return refuse(method, codes.PermissionDenied, pb.ReasonTokenReadOnly,
			fmt.Sprintf("%s: the bearer token is read-only: it may call Get, List, Attempts, Pauses, Instance, ListQuarantined, QuarantineGroups and Steps; give an operator's token to change anything", method), meta)
	}
	return nil
}

// reflectionPrefix names the reflection services' methods, which only
// describe the API: a read-only token may call them.
const reflectionPrefix = "/grpc.reflection."

// readMethods are what a read-only token may call.
var readMethods = map[string]bool{
	pb.TasksService_Get_FullMethodName:              true,
	pb.TasksService_List_FullMethodName:             true,
	pb.TasksService_Attempts_FullMethodName:         true,
	pb.TasksService_Pauses_FullMethodName:           true,
	pb.TasksService_Instance_FullMethodName:         true,
	pb.TasksService_ListQuarantined_FullMethodName:  true,
	pb.TasksService_QuarantineGroups_FullMethodName: true,
	pb.WorkersService_Steps_FullMethodName:          true,
}

// unary authorizes a call (again: the tap did before its message was
// read, but a grpc.Server given only the interceptors stays closed too),
// refuses one with more items than the batch limit (checkItems), turns a panic into INTERNAL (one bad request
// must not take the server down) and logs what went wrong on the server's
// side.
func (s *Server) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	refused := answerRefused(&s.refused, info.FullMethod, req, s.cfg.MaxMessage) // taken first, so that no entry stays
	if err := s.authorize(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	if refused != nil {
		return nil, refused
	}
	if err := checkItems(info.FullMethod, req, s.cfg.MaxBatch); err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			s.cfg.Logger.Error("panic in a request", "method", info.FullMethod, "panic", v)
			resp, err = nil, refuse(info.FullMethod, codes.Internal, pb.ReasonInternal, fmt.Sprintf("%s: the server failed (a bug): %v", info.FullMethod, v), map[string]string{"method": info.FullMethod})
		}
		s.logFailure(info.FullMethod, err)
	}()
	return handler(ctx, req)
}

func (s *Server) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := s.authorize(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}

func (s *Server) logFailure(method string, err error) {
	switch status.Code(err) {
	case codes.Internal, codes.Unavailable, codes.Unknown, codes.DataLoss:
		s.cfg.Logger.Warn("request failed", "method", method, "err", err)
	}
}

// caller names who made a request, for the audit log: "api token 3f9a1c"
// (a hash's prefix, never the token), or "api" on a server without
// tokens.
// mayExec reports whether the caller may enqueue process tasks: its token
// has the right exec, or the server takes no tokens (it serves a loopback
// address alone, where every caller is the host's operator).
func (s *Server) mayExec(ctx context.Context) bool {
	if s.tokens.Len() == 0 {
		return true
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return false
	}
	_, tok, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	return s.tokens.Exec(strings.TrimSpace(tok))
}

// checkExec refuses the enqueue (op) of process tasks (kind exec) by a
// caller whose token lacks the right exec: such a task runs a command on
// every worker that allows it.
func (s *Server) checkExec(ctx context.Context, op string, ts []task.NewTask) error {
	for i, t := range ts {
		if t.Kind != task.KindExec || s.mayExec(ctx) {
			continue
		}
		return refuse(op, codes.PermissionDenied, pb.ReasonTokenNoExec,
			fmt.Sprintf("%s: task %d is a process task (kind exec), which runs a command on the workers that allow it, and the bearer token lacks the right exec: "+
				"give the token that right (a line \"TOKEN operator exec\" in the tokens file, or in %s), or enqueue another kind", op, i, TokensEnv),
			map[string]string{"right": RightExec, "kind": task.KindExec})
	}
	return nil
}

func caller(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return "api"
	}
	_, tok, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	return "api " + TokenName(tok)
}

// audit writes an operator's action on one task through the API to the
// store's audit log, when it keeps one; a failure to write it is logged,
// and the action stands.
func (s *Server) audit(ctx context.Context, action, target string) {
	s.auditEntry(ctx, store.AuditEntry{Action: action, Target: target, Count: 1})
}

// auditN is audit for an action that changed n things (0 or more).
func (s *Server) auditN(ctx context.Context, action, target string, n int, detail string) {
	s.auditEntry(ctx, store.AuditEntry{Action: action, Target: target, Count: n, Detail: detail})
}

// auditEntry writes e, signed by the caller, as audit does.
func (s *Server) auditEntry(ctx context.Context, e store.AuditEntry) {
	a, ok := s.cfg.Store.(store.Auditor)
	if !ok {
		return
	}
	e.Who = caller(ctx)
	if _, err := a.Audit(context.WithoutCancel(ctx), e); err != nil {
		s.cfg.Logger.Error("could not write the audit log", "action", e.Action, "target", e.Target, "err", err)
	}
}
