package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// countRefusals counts the Finish calls the real store refused.
type countRefusals struct {
	*postgres.Store
	refused *atomic.Int64
}

func (s countRefusals) Finish(ctx context.Context, fs []store.Finish) ([]error, error) {
	errs, err := s.Store.Finish(ctx, fs)
	if err != nil || slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, task.ErrRefused) }) {
		s.refused.Add(1)
	}
	return errs, err
}

// TestCommitErrorHook: on a real PostgreSQL store that refuses to record
// successes, the policy's OnCommitError hook is asked after each failed
// recording and its answer holds: by default (no hook) the engine keeps
// trying until the store takes the result; a hook may fail the task; a
// hook may give the attempt up, which is then interrupted and retried as
// after a dead worker.
func TestCommitErrorHook(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		hook  func(asked *atomic.Int64) retry.Hook
		check func(t *testing.T, st store.Store, tk task.Task, allow func(), asked *atomic.Int64)
	}{
		"no hook keeps trying": {
			check: func(t *testing.T, st store.Store, tk task.Task, allow func(), _ *atomic.Int64) {
				refused := st.(countRefusals).refused
				waitFor(t, 20*time.Second, func() bool { return refused.Load() >= 3 }, func() string { return "the store refused fewer than 3 recordings" })
				got, _ := st.GetTask(context.Background(), tk.ID)
				if got.State.Terminal() {
					t.Fatalf("task %s while its success could not be recorded", got.State)
				}
				allow()
				if got := waitState(t, st, tk.ID, task.Success, task.Failed); got.State != task.Success || got.Attempt != 1 {
					t.Errorf("task %s at attempt %d, want SUCCESS at 1 once the store took it", got.State, got.Attempt)
				}
			},
		},
		"a hook fails the task": {
			hook: func(asked *atomic.Int64) retry.Hook {
				return func(a retry.Attempt, d retry.Decision) retry.Decision {
					asked.Add(1)
					if a.Kind != retry.CommitError || a.Err == nil || !d.Retry {
						panic(fmt.Sprintf("asked with %+v, %+v", a, d))
					}
					if a.Streak >= 2 {
						return retry.Decision{Reason: retry.ReasonPermanent}
					}
					return d
				}
			},
			check: func(t *testing.T, st store.Store, tk task.Task, _ func(), asked *atomic.Int64) {
				got := waitState(t, st, tk.ID, task.Failed, task.Success)
				if got.State != task.Failed || !strings.Contains(got.LastError, "could not be recorded") || !strings.Contains(got.LastError, "No space left") {
					t.Errorf("task %s: %q, want FAILED saying its result could not be recorded", got.State, got.LastError)
				}
				if n := asked.Load(); n != 2 {
					t.Errorf("the hook was asked %d times, want 2", n)
				}
			},
		},
		"a hook gives the attempt up": {
			hook: func(asked *atomic.Int64) retry.Hook {
				return func(a retry.Attempt, d retry.Decision) retry.Decision {
					asked.Add(1)
					return retry.Decision{Reason: retry.ReasonCanceled}
				}
			},
			check: func(t *testing.T, st store.Store, tk task.Task, _ func(), asked *atomic.Int64) {
				// Attempt 1's success is never recorded; its lease lapses, the
				// rescue interrupts it, and attempt 2 fails for good.
				got := waitState(t, st, tk.ID, task.Failed, task.Success)
				as := attempts(t, st, tk.ID)
				if got.State != task.Failed || got.Attempt != 2 || len(as) != 2 || as[0].Outcome != task.OutcomeInterrupted {
					t.Errorf("task %s at attempt %d, attempts %+v; want attempt 1 INTERRUPTED and attempt 2 FAILED", got.State, got.Attempt, as)
				}
				if asked.Load() != 1 {
					t.Errorf("the hook was asked %d times, want 1", asked.Load())
				}
			},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			schema := pgtest.NewSchema(t)
			pg := pgtest.OpenIn(t, schema)
			st := countRefusals{Store: pg, refused: new(atomic.Int64)}
			allow := pgtest.Refuse(t, schema, "", "could not extend file: No space left on device")
			var asked atomic.Int64
			p := retry.Policy{MaxAttempts: 3}
			if c.hook != nil {
				p.OnCommitError = c.hook(&asked)
			}
			var runs atomic.Int64
			cfg := testConfig(st)
			start(t, cfg, Handler{Kind: "charge", Policy: &p, Fn: func(context.Context, *task.Task) error {
				if runs.Add(1) > 1 {
					return retry.Permanent(fmt.Errorf("declined"))
				}
				return nil
			}})
			tk := enqueue(t, st, task.NewTask{Kind: "charge"})
			waitFor(t, 20*time.Second, func() bool { return runs.Load() >= 1 }, func() string { return "the handler never ran" })
			c.check(t, st, tk, allow, &asked)
		})
	}
}
