package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/internal/quarantine"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// A remote worker sets items aside as a Go handler does (grit.Quarantine):
// through the same store call, fenced by the lease; each item's error is
// fingerprinted as a reported failure's message is (reported), and the
// task's count is judged by the engine's rule (quarantine.Tolerance), at
// once against max and, when the worker completes the task with its
// policy, against max_share of what it saw. Each attempt that set items
// aside raises one alert, when its result is reported.

func (x *workers) Quarantine(ctx context.Context, r *pb.QuarantineRequest) (*pb.QuarantineResponse, error) {
	const op = "quarantine"
	items, tol, err := x.s.lim.quarantine(r)
	if err != nil {
		return nil, statusOf(op, err)
	}
	t, err := x.s.holding(ctx, r.GetWorkerId(), r.GetTaskId(), r.GetLeaseToken(), "the items are not set aside")
	if err != nil {
		return nil, statusOf(op, aboutTask(r.GetTaskId(), err))
	}
	if k := r.GetPolicy().GetKind(); k != "" && k == t.Kind {
		return nil, statusOf(op, bad("policy.kind", "%q is the task's own kind: a replay runs one item as its args; name the kind that handles one item, or none", k))
	}
	total, err := x.s.cfg.Store.Quarantine(ctx, t.ID, t.LeaseToken, items)
	if errors.Is(err, task.ErrLeaseLost) { // lost since it was read: say how
		if _, herr := x.s.holding(ctx, r.GetWorkerId(), t.ID, r.GetLeaseToken(), "the items are not set aside"); herr != nil {
			err = herr
		}
	}
	if err != nil {
		return nil, statusOf(op, aboutTask(t.ID, err))
	}
	now := time.Now()
	// The lease the worker asked for, as long as it is left at least (a
	// worker heartbeats a few times a lease).
	lease := max(x.s.cfg.Lease, t.LeaseExpires.Sub(now))
	x.s.quar.recorded(t, items, total, lease, now, x.s.alerts.Send)
	out := &pb.QuarantineResponse{Total: int64(total), Fingerprints: make([]string, len(items))}
	for i, it := range items {
		out.Fingerprints[i] = it.Fingerprint
	}
	if v := tol.Past(total); v != nil {
		out.TooMany, out.Verdict = true, v.Error()
	}
	return out, nil
}

// reported is the error a remote worker reports as msg, a failure's
// message or a quarantined item's error: a plain error, fingerprinted by
// its masked text (retry.Fingerprint), so that "row 42: no account 1042"
// and "row 43: no account 1043" are one failure.
func reported(msg string) error {
	if msg == "" {
		msg = "the worker reported a failure without a message"
	}
	return errors.New(msg)
}

// tolerance is a worker's quarantine policy as the engine's rule takes it.
func tolerance(p *pb.QuarantinePolicy) quarantine.Tolerance {
	return quarantine.Tolerance{Max: int(p.GetMax()), MaxShare: p.GetMaxShare()}
}

// quarantine checks a Quarantine and returns its items, fingerprinted,
// and the worker's tolerance.
func (l limits) quarantine(r *pb.QuarantineRequest) ([]task.Quarantined, quarantine.Tolerance, error) {
	tol := tolerance(r.GetPolicy())
	if err := checkLeaseOf(r.GetWorkerId(), r.GetTaskId(), r.GetLeaseToken()); err != nil {
		return nil, tol, err
	}
	if err := checkPolicy("policy", r.GetPolicy()); err != nil {
		return nil, tol, err
	}
	if len(r.GetItems()) == 0 {
		return nil, tol, bad("items", "none: give at least one item to set aside")
	}
	if err := l.checkBatch("items", len(r.GetItems())); err != nil {
		return nil, tol, err
	}
	out := make([]task.Quarantined, len(r.GetItems()))
	for i, it := range r.GetItems() {
		f := fmt.Sprintf("items[%d]", i)
		if err := checkItem(f, it); err != nil {
			return nil, tol, err
		}
		out[i] = task.Quarantined{ReplayKind: r.GetPolicy().GetKind(), Item: it.GetItem(), Error: it.GetError(),
			Fingerprint: retry.Fingerprint(reported(it.GetError()))}
	}
	return out, tol, nil
}

// checkItem checks an item to set aside.
func checkItem(f string, it *pb.QuarantineItem) error {
	switch b := it.GetItem(); {
	case len(b) > task.MaxQuarantinedItem:
		return over(pb.ReasonPayloadTooLarge, f+".item", "%d bytes, more than the %s an item keeps: set aside a reference to it (a key, a line number) instead", len(b), formatBytes(task.MaxQuarantinedItem))
	case len(b) == 0:
		return bad(f+".item", "missing: give the item, as JSON")
	case task.JSONProblem(b) != "":
		return bad(f+".item", "%s", task.JSONProblem(b))
	case it.GetError() == "":
		return bad(f+".error", "missing: say why the item was set aside")
	}
	return checkOutput(f+".error", it.GetError())
}

// checkPolicy checks a worker's quarantine policy; unset is none.
func checkPolicy(f string, p *pb.QuarantinePolicy) error {
	if err := checkName(f+".kind", p.GetKind(), "import.row", false); err != nil {
		return err
	}
	if err := tolerance(p).Validate(); err != nil {
		return bad(f, "%v", err)
	}
	return nil
}

// holding returns the task worker names, when it holds it under token;
// else an error saying whose it is, and that what is not done (e.g. "the
// step is not recorded") was not.
func (s *Server) holding(ctx context.Context, worker string, id, token int64, notDone string) (task.Task, error) {
	t, err := s.cfg.Store.GetTask(ctx, id)
	if err != nil {
		return t, err
	}
	if t.State != task.Running || t.LeaseToken != token || (worker != "" && t.LeaseOwner != worker) {
		e := &leaseError{task: t.ID, token: token, state: t.State,
			msg: fmt.Sprintf("task %d, lease token %d: not held by worker %q (the task is %s under token %d): %s",
				t.ID, token, worker, t.State, t.LeaseToken, notDone)}
		if t.State == task.Running && t.LeaseToken == token {
			e.holder = t.LeaseOwner // the token is current: another worker holds it
		}
		return t, e
	}
	return t, nil
}

// quarTallies holds what remote workers' attempts set aside, by lease
// token, until their results come: each attempt's one alert is raised
// then, or when a heartbeat finds its lease lost. An attempt silent for
// a few leases (its worker died, its heartbeats and result go to another
// server) is alerted on then; after a restart its tally is lost, and the
// items stay quarantined all the same.
type quarTallies struct {
	mu    sync.Mutex
	held  map[int64]*quarTally
	swept time.Time
}

type quarTally struct {
	t     task.Task
	log   quarantine.Log
	last  time.Time // its last Quarantine or heartbeat
	lease time.Duration
}

// recorded notes that the store counts total items of t after items were
// set aside, at now, and raises, through send, the alerts of attempts
// that will not report.
func (q *quarTallies) recorded(t task.Task, items []task.Quarantined, total int, lease time.Duration, now time.Time, send func(alert.Event)) {
	q.mu.Lock()
	if q.held == nil {
		q.held = map[int64]*quarTally{}
	}
	a, ok := q.held[t.LeaseToken]
	if !ok {
		a = &quarTally{t: t, lease: lease}
		q.held[t.LeaseToken] = a
	}
	a.last = now
	stale := q.sweepLocked(now)
	q.mu.Unlock()
	a.log.Recorded(items, total)
	for _, a := range stale {
		a.alert(now, send)
	}
}

// end raises the alert of the attempt under token, if it set items aside.
func (q *quarTallies) end(token int64, now time.Time, send func(alert.Event)) {
	q.mu.Lock()
	a, ok := q.held[token]
	delete(q.held, token)
	q.mu.Unlock()
	if ok {
		a.alert(now, send)
	}
}

// heartbeat notes, at now, that the attempts under held are alive, and
// ends those under lost: they will not report.
func (q *quarTallies) heartbeat(held, lost []store.Lease, now time.Time, send func(alert.Event)) {
	q.mu.Lock()
	if len(q.held) == 0 {
		q.mu.Unlock()
		return
	}
	for _, l := range held {
		if a, ok := q.held[l.Token]; ok {
			a.last = now
		}
	}
	q.mu.Unlock()
	for _, l := range lost {
		q.end(l.Token, now, send)
	}
}

func (a *quarTally) alert(now time.Time, send func(alert.Event)) {
	if l := a.log.Tally(); l.Added > 0 {
		send(alert.Quarantined(a.t, l.Added, l.Fingerprint, l.Error, now))
	}
}

// sweepLocked takes, at most once a minute, the tallies silent for more
// than four leases: their attempts will not report here.
func (q *quarTallies) sweepLocked(now time.Time) []*quarTally {
	if now.Sub(q.swept) < time.Minute {
		return nil
	}
	q.swept = now
	var out []*quarTally
	for token, a := range q.held {
		if now.Sub(a.last) > 4*a.lease {
			out = append(out, a)
			delete(q.held, token)
		}
	}
	return out
}

// judge decides, before rs are recorded, the completes whose worker sent
// its quarantine policy: past it, the success is a permanent failure
// (result.verdict), as a Go handler's is. items index the results held,
// ts their tasks. A task whose lease is lost meanwhile is left to Finish
// to refuse; the error is the store's, which spoils every result.
func (s *Server) judge(ctx context.Context, rs []result, items []int, ts []task.Task) error {
	for j, i := range items {
		c := rs[i].r.GetComplete()
		if c == nil || c.GetQuarantine() == nil {
			continue
		}
		total, err := s.cfg.Store.Quarantine(ctx, ts[j].ID, ts[j].LeaseToken, nil)
		switch {
		case errors.Is(err, task.ErrLeaseLost):
			continue
		case err != nil:
			return err
		}
		rs[i].verdict = tolerance(c.GetQuarantine()).Verdict(total, int(c.GetSeen()))
	}
	return nil
}
