package server

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// workers serves the WorkersService: the remote-worker protocol.
type workers struct {
	pb.UnimplementedWorkersServiceServer
	s *Server
}

func (x *workers) Claim(ctx context.Context, r *pb.ClaimRequest) (*pb.ClaimResponse, error) {
	req, wait, err := x.s.lim.claim(r, x.s.cfg.Lease)
	if err != nil {
		return nil, statusOf("claim", err)
	}
	if err := x.s.register(ctx, r); err != nil {
		return nil, statusOf("claim", err)
	}
	ts, err := x.s.claim(ctx, req, wait)
	if err != nil {
		return nil, statusOf("claim", err)
	}
	out := toTasks(ts, true)
	x.s.auto.set(ctx, out)
	if parents := x.s.spans.start(ts, req.Lease); parents != nil {
		for _, t := range out {
			t.Traceparent = parents[t.GetId()]
		}
	}
	return &pb.ClaimResponse{Tasks: out, Lease: durationpb.New(req.Lease)}, nil
}

// maxSeen bounds the workers a server remembers having registered; past
// it, it forgets them all (registering again is harmless).
const maxSeen = 10_000

// register records a worker the first time this server sees it, with what
// it says of itself.
func (s *Server) register(ctx context.Context, r *pb.ClaimRequest) error {
	id := r.GetWorkerId()
	s.seenMu.Lock()
	seen := s.seen[id]
	s.seenMu.Unlock()
	if seen {
		return nil
	}
	w := task.Worker{ID: id, Host: r.GetHost(), PID: int(r.GetPid()), Version: r.GetVersion(), Active: true, Kinds: r.GetKinds()}
	if err := s.cfg.Store.RegisterWorker(ctx, w); err != nil {
		return err
	}
	s.seenMu.Lock()
	if len(s.seen) >= maxSeen {
		clear(s.seen)
	}
	s.seen[id] = true
	s.seenMu.Unlock()
	return nil
}

func (s *Server) forget(worker string) {
	s.seenMu.Lock()
	delete(s.seen, worker)
	s.seenMu.Unlock()
}

// claim claims for req, waiting up to wait for a task to be due: woken by
// an enqueue or a retry through this server, the store's notifications,
// the next due time, or at the latest every Config.Poll. A wait ends
// early enough for the answer to beat the call's deadline, and when the
// server stops. Tasks claimed for a call that has ended, or past what the
// answer carries (Config.MaxAnswer), are given back at once.
func (s *Server) claim(ctx context.Context, req store.ClaimRequest, wait time.Duration) ([]task.Task, error) {
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)*9/10)
	}
	end := time.Now().Add(wait)
	for {
		woken := s.wake.wait() // before the claim, so that a wake during it counts
		ts, err := s.claimGated(ctx, req)
		if err != nil {
			return nil, err
		}
		if len(ts) > 0 {
			return s.keep(ctx, req.Worker, ts), nil
		}
		left := time.Until(end)
		if left <= 0 {
			return nil, nil
		}
		// NextDue outside what the gate holds back: a held-back group's due
		// tasks must not wake the wait at once, again and again.
		skips, open := s.gate.Skips(gate.Request{ClaimRequest: req})
		if !s.sleep(ctx, skips, open, min(left, s.cfg.Poll), woken) {
			return nil, nil
		}
	}
}

// gateRefresh is how stale the gate's view of groups and limits may be
// when a claim comes.
const gateRefresh = time.Second

// claimGated claims for a remote worker through the gate, as a Go worker
// claims: probes of the groups that allow one, the places its ended
// attempts freed, then req outside what the gate holds back for it, then
// admission; what the gate does not let run is recorded here.
func (s *Server) claimGated(ctx context.Context, req store.ClaimRequest) ([]task.Task, error) {
	s.gate.RefreshIfOlder(ctx, gateRefresh)
	c, err := s.gate.Claim(ctx, gate.Request{ClaimRequest: req})
	// Handing a task to a remote worker starts its attempt: one whose
	// queue, kind or tenant was paused since the claim is given back.
	var paused []gate.Back
	c.Tasks, paused = s.gate.SplitPaused(c.Tasks, req.Worker, time.Now())
	c.Back = append(c.Back, paused...)
	if len(c.Back) > 0 {
		fs := make([]store.Finish, len(c.Back))
		for i, b := range c.Back {
			fs[i] = b.Finish
		}
		if _, ferr := s.cfg.Store.Finish(ctx, fs); ferr != nil {
			s.cfg.Logger.Warn("could not give back or fail claimed tasks; their leases will expire", "tasks", len(fs), "err", ferr)
		}
	}
	if err != nil && len(c.Tasks) == 0 {
		return nil, err
	}
	return c.Tasks, nil
}

// sleep waits up to d, less if a task is due sooner, or until woken; it
// reports false when the call or the server ended.
// open is false when everything req asks for is paused: nothing is due
// for it.
func (s *Server) sleep(ctx context.Context, req store.ClaimRequest, open bool, d time.Duration, woken <-chan struct{}) bool {
	if p, ok := s.gate.UntilProbe(); ok {
		d = min(d, max(p, time.Millisecond))
	}
	if open {
		if now, err := s.cfg.Store.Now(ctx); err == nil {
			req.DueBefore = now.Add(d) // later ones wait for the next call
			if next, ok, err := s.cfg.Store.NextDue(ctx, req); err == nil && ok {
				d = min(d, max(next.Sub(now), time.Millisecond))
			}
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-woken:
	case <-t.C:
	case <-ctx.Done():
		return false
	case <-s.stopping:
		return false
	}
	return true
}

// keep returns the claimed tasks the answer carries, and gives back the
// others: all of them when the call has ended (nobody would work them).
func (s *Server) keep(ctx context.Context, worker string, ts []task.Task) []task.Task {
	n := s.fit(ts)
	if ctx.Err() != nil {
		n = 0
	}
	if n == len(ts) {
		return ts
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := s.release(rctx, worker, ts[n:]); err != nil {
		s.cfg.Logger.Warn("could not give back claimed tasks; their leases will expire", "tasks", len(ts)-n, "err", err)
	}
	return ts[:n]
}

func (x *workers) Heartbeat(ctx context.Context, r *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	held, err := x.s.lim.leases(r.GetWorkerId(), r.GetLeases())
	if err != nil {
		return nil, statusOf("heartbeat", err)
	}
	lease, err := checkLease("lease", r.GetLease(), x.s.cfg.Lease)
	if err != nil {
		return nil, statusOf("heartbeat", err)
	}
	lost, err := x.s.cfg.Store.Heartbeat(ctx, r.GetWorkerId(), lease, held)
	if err != nil {
		return nil, statusOf("heartbeat", err)
	}
	x.s.gate.Lost(r.GetWorkerId(), lost)
	x.s.quar.heartbeat(held, lost, time.Now(), x.s.alerts.Send)
	return &pb.HeartbeatResponse{Lost: toLeases(lost)}, nil
}

// Release gives back the tasks the worker names, each only if it still
// holds it, under that token and in its own name; the others are answered
// as lost.
func (x *workers) Release(ctx context.Context, r *pb.ReleaseRequest) (*pb.ReleaseResponse, error) {
	held, err := x.s.lim.leases(r.GetWorkerId(), r.GetLeases())
	if err != nil {
		return nil, statusOf("release", err)
	}
	var ts []task.Task
	var lost []store.Lease
	for _, l := range held {
		t, err := x.s.cfg.Store.GetTask(ctx, l.TaskID)
		switch {
		case err != nil:
			return nil, statusOf("release", aboutTask(l.TaskID, err))
		case t.State != task.Running || t.LeaseToken != l.Token || t.LeaseOwner != r.GetWorkerId():
			lost = append(lost, l)
		default:
			ts = append(ts, t)
		}
	}
	more, err := x.s.release(ctx, r.GetWorkerId(), ts)
	if err != nil {
		return nil, statusOf("release", err)
	}
	if r.GetDeactivate() {
		x.s.forget(r.GetWorkerId())
		if err := x.s.cfg.Store.DeactivateWorker(ctx, r.GetWorkerId()); err != nil && !isNotFound(err) {
			return nil, statusOf("release", err)
		}
	}
	return &pb.ReleaseResponse{Lost: toLeases(append(lost, more...))}, nil
}
