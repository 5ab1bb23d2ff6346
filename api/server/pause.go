package server

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/store"
)

// pauseScopes maps the API's pause scopes to the store's.
var pauseScopes = map[pb.PauseScope]store.Scope{
	pb.PauseScope_PAUSE_SCOPE_QUEUE:  store.ScopeQueue,
	pb.PauseScope_PAUSE_SCOPE_KIND:   store.ScopeKind,
	pb.PauseScope_PAUSE_SCOPE_TENANT: store.ScopeTenant,
}

func pbScope(s store.Scope) pb.PauseScope {
	for k, v := range pauseScopes {
		if v == s {
			return k
		}
	}
	return pb.PauseScope_PAUSE_SCOPE_UNSPECIFIED
}

func toPause(p store.Pause) *pb.PauseInfo {
	return &pb.PauseInfo{Scope: pbScope(p.Scope), Name: p.Name, Since: timestamppb.New(p.Since), Who: p.Who}
}

// pauser is the store's pauses, or an error the caller can act on.
func (s *Server) pauser(op string) (store.Pauser, error) {
	p, ok := s.cfg.Store.(store.Pauser)
	if !ok {
		return nil, unsupported(op, "pauses", op+": the server's store keeps no pauses (both the SQLite and PostgreSQL stores do)")
	}
	return p, nil
}

// pauseTarget reads a request's scope and name.
func pauseTarget(op string, scope pb.PauseScope, name string) (store.Scope, error) {
	sc, ok := pauseScopes[scope]
	if !ok {
		return "", statusOf(op, bad("scope", "%v: want PAUSE_SCOPE_QUEUE, PAUSE_SCOPE_KIND or PAUSE_SCOPE_TENANT", scope))
	}
	if err := store.ValidatePause(sc, name); err != nil {
		return "", statusOf(op, bad("name", "%q: want a name of 1 to 200 characters", name))
	}
	return sc, nil
}

func (x *tasks) Pauses(ctx context.Context, _ *pb.PausesRequest) (*pb.PausesResponse, error) {
	p, err := x.s.pauser("pauses")
	if err != nil {
		return nil, err
	}
	ps, err := p.Pauses(ctx)
	if err != nil {
		return nil, statusOf("pauses", err)
	}
	out := &pb.PausesResponse{}
	for _, q := range ps {
		out.Pauses = append(out.Pauses, toPause(q))
	}
	return out, nil
}

func (x *tasks) Pause(ctx context.Context, r *pb.PauseRequest) (*pb.PauseResponse, error) {
	p, err := x.s.pauser("pause")
	if err != nil {
		return nil, err
	}
	sc, err := pauseTarget("pause", r.GetScope(), r.GetName())
	if err != nil {
		return nil, err
	}
	got, err := p.Pause(ctx, store.Pause{Scope: sc, Name: r.GetName(), Who: caller(ctx)})
	if err != nil {
		return nil, statusOf("pause", err)
	}
	x.s.audit(ctx, "pause", string(sc)+" "+r.GetName())
	return &pb.PauseResponse{Pause: toPause(got)}, nil
}

func (x *tasks) Resume(ctx context.Context, r *pb.ResumeRequest) (*pb.ResumeResponse, error) {
	p, err := x.s.pauser("resume")
	if err != nil {
		return nil, err
	}
	sc, err := pauseTarget("resume", r.GetScope(), r.GetName())
	if err != nil {
		return nil, err
	}
	was, err := p.Resume(ctx, sc, r.GetName())
	if err != nil {
		return nil, statusOf("resume", err)
	}
	if was {
		x.s.audit(ctx, "resume", string(sc)+" "+r.GetName())
		x.s.wake.notify() // waiting claims may find work now
	}
	return &pb.ResumeResponse{WasPaused: was}, nil
}
