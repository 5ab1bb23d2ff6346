package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

var (
	// ErrStepOrder is matched by the error of a step reached in another
	// place than an earlier attempt of the task recorded: the handler's
	// steps changed, or depend on something other than its args and
	// its steps' results.
	ErrStepOrder = errors.New("engine: a step reached out of the recorded order")
	// ErrNoAttempt is matched by the error of a step run outside a
	// handler's attempt (with a context the engine did not give).
	ErrNoAttempt = errors.New("engine: a step outside a handler's attempt")
)

// stepLog is an attempt's steps: those its task recorded (read once, at
// its first step) and where the handler is among them.
type stepLog struct {
	mu     sync.Mutex // steps run one at a time
	loaded bool
	done   []task.Step // by Seq
	seq    int         // the steps reached
	occ    map[string]int
	// allow holds the attempt's allowance of in-process retries, which
	// every step's retries draw on.
	allow context.Context
	// waiting is the wait the handler was told to end its attempt with
	// (Receive, Await): every later step answers it too, so that nothing
	// is recorded after a wait whose outcome is not.
	waiting *WaitError
}

type stepKey struct{}

// Step runs fn as the step name of the handler's task, or answers the
// result an earlier attempt recorded for it without running fn. Steps are
// identified by name and occurrence (the third "fetch" is ("fetch", 3)),
// and must be reached in the order recorded: a step reached elsewhere
// fails the attempt permanently, matching ErrStepOrder. With a policy, fn
// is retried in-process, its retries drawn from the attempt's allowance
// (the retries its task's policy has left), so a step's retries and the
// task's never multiply. A result is JSON of at most task.MaxStepResult
// bytes. replayed reports an answer from the record.
func Step(ctx context.Context, name string, policy *retry.Policy, fn func(context.Context) (json.RawMessage, error)) (result json.RawMessage, replayed bool, err error) {
	c, ok := ctx.Value(stepKey{}).(*attemptCtx)
	if !ok {
		return nil, false, fmt.Errorf("step %q: %w (give it the context the handler got)", name, ErrNoAttempt)
	}
	sp := c.e.stepper()
	l := &c.a.steps
	l.mu.Lock()
	defer l.mu.Unlock()
	at, err := l.reach(ctx, c, name)
	if err != nil || at.done != nil {
		return at.result(), err == nil, err
	}
	res, err := l.run(ctx, c, policy, fn)
	if err != nil {
		return nil, false, err
	}
	at.s.Result = res
	rec, err := sp.RecordStep(ctx, c.a.t.ID, c.a.t.LeaseToken, at.s)
	if err != nil {
		return nil, false, fmt.Errorf("step %q: %w", name, err)
	}
	l.passed(rec)
	return rec.Result, false, nil
}

// reached is where a handler is among its steps: the step it reached,
// recorded already (done), or the step to record (s).
type reached struct {
	done *task.Step
	s    task.Step
}

func (r reached) result() json.RawMessage {
	if r.done == nil {
		return nil
	}
	return r.done.Result
}

// reach finds the step name reached next, with l.mu held: its record,
// checked against the order recorded (passed already), or the step to
// record, which passed then takes the handler past. It reads the task's
// steps at the first step of the attempt.
func (l *stepLog) reach(ctx context.Context, c *attemptCtx, name string) (reached, error) {
	if l.waiting != nil {
		return reached{}, l.waiting
	}
	if !l.loaded {
		done, err := c.e.stepper().Steps(ctx, c.a.t.ID)
		if err != nil {
			return reached{}, fmt.Errorf("step %q: read the task's steps: %w", name, err)
		}
		l.done, l.occ, l.loaded = done, map[string]int{}, true
	}
	seq, occ := l.seq+1, l.occ[name]+1
	if seq > len(l.done) {
		return reached{s: task.Step{Seq: seq, Name: name, Occurrence: occ, Attempt: c.a.t.Attempt}}, nil
	}
	r := l.done[seq-1]
	if r.Name != name || r.Occurrence != occ {
		return reached{}, retry.Permanent(fmt.Errorf("%w: the handler reached step %q (occurrence %d) as its step %d, where attempt %d recorded %q (occurrence %d): its steps must come in the same order on every attempt, so their order may depend only on its args and earlier steps' results",
			ErrStepOrder, name, occ, seq, r.Attempt, r.Name, r.Occurrence))
	}
	l.seq, l.occ[name] = seq, occ
	return reached{done: &r}, nil
}

// passed takes the handler past the step rec, just recorded.
func (l *stepLog) passed(rec task.Step) {
	l.done = append(l.done, rec)
	l.seq, l.occ[rec.Name] = rec.Seq, rec.Occurrence
}

// stepper keeps an attempt's steps: the store, or in an isolated
// handler's child, which has none, its worker's (childSide).
func (e *Engine) stepper() store.Stepper {
	if e.child != nil {
		return e.child
	}
	return e.cfg.Store
}

// run runs fn, with its policy's retries drawn from the attempt's
// allowance, and checks its result.
func (l *stepLog) run(ctx context.Context, c *attemptCtx, policy *retry.Policy, fn func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	var res json.RawMessage
	var err error
	if policy == nil {
		res, err = fn(ctx)
	} else {
		if l.allow == nil {
			p := c.e.policyFor(c.a.t)
			left := math.MaxInt32
			if p.MaxAttempts > 0 {
				left = max(p.MaxAttempts-c.a.t.Attempt, 0)
			}
			l.allow = retry.WithAllowance(context.Background(), left)
		}
		res, err = retry.Do(sharedAllowance{ctx, l.allow}, fn, retry.WithPolicy(*policy))
	}
	if err != nil {
		return nil, err
	}
	if len(res) == 0 {
		res = json.RawMessage("null")
	}
	if len(res) > task.MaxStepResult {
		return nil, retry.Permanent(fmt.Errorf("a result of %d bytes: the most a step records is %d; record a reference (a key, a URL) to a large result instead", len(res), task.MaxStepResult))
	}
	return res, nil
}

// sharedAllowance is ctx with the retry allowance of from.
type sharedAllowance struct {
	context.Context
	from context.Context
}

func (s sharedAllowance) Value(key any) any {
	if a, ok := s.from.Value(key).(*retry.Allowance); ok {
		return a
	}
	return s.Context.Value(key)
}
