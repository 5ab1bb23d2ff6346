package grit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/internal/proctest"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/task"
)

// stepDSNs are the stores the step tests run on.
var stepDSNs = map[string]func(t *testing.T) string{
	"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "grit.db") },
	"postgres": func(t *testing.T) string { return pgtest.WithSchema(pgtest.NewSchema(t)) },
}

func openDSN(t *testing.T, dsn string, cfg grit.Config) *grit.Client {
	t.Helper()
	c, err := grit.Open(context.Background(), dsn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func stepsOf(t *testing.T, c *grit.Client, id int64) []task.Step {
	t.Helper()
	ss, err := c.Steps(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// TestStepResumesAfterItsLastFinishedStep: a retried handler answers its
// finished steps from their record and runs the rest.
func TestStepResumesAfterItsLastFinishedStep(t *testing.T) {
	t.Parallel()
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := openDSN(t, dsn(t), grit.Config{Concurrency: 2})
			var charged, mailed atomic.Int64
			grit.Handle(c, "pay", func(ctx context.Context, o charge) error {
				id, err := grit.Step(ctx, "charge", func(ctx context.Context) (string, error) {
					charged.Add(1)
					return "ch-" + o.Order, nil
				})
				if err != nil {
					return err
				}
				_, err = grit.Step(ctx, "mail", func(ctx context.Context) (int, error) {
					if mailed.Add(1) == 1 {
						return 0, retry.Transient(errors.New("smtp: connection reset"))
					}
					if id != "ch-o-1" {
						return 0, fmt.Errorf("the charge's id is %q on a replay", id)
					}
					return 1, nil
				})
				return err
			}, grit.HandlerConfig{Policy: "3 10ms 10ms"})
			tk, err := c.Enqueue(context.Background(), "pay", charge{Order: "o-1"})
			if err != nil {
				t.Fatal(err)
			}
			startClient(t, c)
			done := waitTask(t, c, tk.ID, task.Success)
			if done.Attempt != 2 || charged.Load() != 1 || mailed.Load() != 2 {
				t.Errorf("attempts %d, charged %d times, mailed %d: want 2 attempts, one charge, two mails", done.Attempt, charged.Load(), mailed.Load())
			}
			ss := stepsOf(t, c, tk.ID)
			if len(ss) != 2 || ss[0].Name != "charge" || ss[0].Attempt != 1 || string(ss[0].Result) != `"ch-o-1"` || ss[1].Name != "mail" || ss[1].Attempt != 2 {
				t.Errorf("steps %+v: want charge by attempt 1, mail by attempt 2", ss)
			}
		})
	}
}

// TestStepsReachedInAnotherOrderFail: a handler whose steps change order
// between attempts fails at once, saying so.
func TestStepsReachedInAnotherOrderFail(t *testing.T) {
	t.Parallel()
	c := open(t)
	grit.Handle(c, "flip", func(ctx context.Context, _ struct{}) error {
		a, _ := grit.AttemptFrom(ctx)
		first, second := "a", "b"
		if a.Number > 1 {
			first, second = "b", "a"
		}
		for _, n := range []string{first, second} {
			if _, err := grit.Step(ctx, n, func(context.Context) (bool, error) { return true, nil }); err != nil {
				return err
			}
		}
		if a.Number == 1 {
			return retry.Transient(errors.New("again"))
		}
		return nil
	}, grit.HandlerConfig{Policy: "3 10ms 10ms"})
	tk, _ := c.Enqueue(context.Background(), "flip", struct{}{})
	startClient(t, c)
	got := waitTask(t, c, tk.ID, task.Failed)
	if got.Attempt != 2 || !strings.Contains(got.LastError, `reached step "b" (occurrence 1) as its step 1, where attempt 1 recorded "a"`) {
		t.Errorf("attempt %d, error %q", got.Attempt, got.LastError)
	}
}

// TestStepRetriesDrawOnTheAttemptsAllowance: a step's own policy retries
// it in-process at most as often as its task's policy has retries left.
func TestStepRetriesDrawOnTheAttemptsAllowance(t *testing.T) {
	t.Parallel()
	c := open(t)
	var calls atomic.Int64
	grit.Handle(c, "flaky", func(ctx context.Context, _ struct{}) error {
		_, err := grit.Step(ctx, "call", func(context.Context) (int, error) {
			calls.Add(1)
			return 0, retry.Transient(errors.New("unavailable"))
		}, grit.StepPolicy("10 1ms 1ms"))
		return err
	}, grit.HandlerConfig{Policy: "3 10ms 10ms"})
	p, _ := retry.Parse("3 10ms 10ms")
	tk, _ := c.Enqueue(context.Background(), "flaky", struct{}{})
	startClient(t, c)
	got := waitTask(t, c, tk.ID, task.Failed)
	// Attempt n may retry in-process MaxAttempts-n times: n calls... in all
	// the sum of (MaxAttempts-n+1) over the attempts, never 10 a step.
	want := 0
	for n := 1; n <= got.Attempt; n++ {
		want += p.MaxAttempts - n + 1
	}
	if int(calls.Load()) != want {
		t.Errorf("%d calls over %d attempts, want %d (each attempt's in-process retries are the task's retries left)", calls.Load(), got.Attempt, want)
	}
}

func TestStepRefusals(t *testing.T) {
	t.Parallel()
	if _, err := grit.Step(context.Background(), "x", func(context.Context) (int, error) { return 1, nil }); !errors.Is(err, grit.ErrNoAttempt) {
		t.Errorf("a step outside a handler: %v, want ErrNoAttempt", err)
	}
	c := open(t)
	grit.Handle(c, "big", func(ctx context.Context, _ struct{}) error {
		_, err := grit.Step(ctx, "blob", func(context.Context) (string, error) { return strings.Repeat("x", task.MaxStepResult), nil })
		return err
	}, grit.HandlerConfig{})
	tk, _ := c.Enqueue(context.Background(), "big", struct{}{})
	startClient(t, c)
	got := waitTask(t, c, tk.ID, task.Failed)
	if got.Attempt != 1 || !strings.Contains(got.LastError, "record a reference") {
		t.Errorf("a step result over the limit: attempt %d, %q; want a permanent failure that says what to do", got.Attempt, got.LastError)
	}
}

// stepWorkerEnv runs this test binary as a worker of the step process
// test (see TestMain).
const stepWorkerEnv = "GRIT_TEST_STEP_WORKER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(stepWorkerEnv); mode != "" {
		os.Exit(stepWorker(mode))
	}
	if mode := os.Getenv(receiveWorkerEnv); mode != "" {
		os.Exit(receiveWorker(mode))
	}
	if grit.IsChild() || os.Getenv(isolatedWorkerEnv) != "" {
		os.Exit(isolatedProcess())
	}
	os.Exit(m.Run())
}

// stepWorker works "pay" tasks on the store GRIT_STORE names: a charge
// step that appends to the file CHARGES, then a notify step that, in
// mode "hang", prints "reached notify" and waits to be killed, and in mode
// "finish" returns.
func stepWorker(mode string) int {
	ctx := context.Background()
	c, err := grit.Open(ctx, os.Getenv("GRIT_STORE"), grit.Config{Lease: 2 * time.Second, Heartbeat: 200 * time.Millisecond, WorkerID: "step-" + mode})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	grit.Handle(c, "pay", func(ctx context.Context, o charge) error {
		if _, err := grit.Step(ctx, "charge", func(context.Context) (string, error) {
			f, err := os.OpenFile(os.Getenv("CHARGES"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return "", err
			}
			defer f.Close()
			_, err = fmt.Fprintln(f, "charge", o.Order)
			return "ch-" + o.Order, err
		}); err != nil {
			return err
		}
		_, err := grit.Step(ctx, "notify", func(ctx context.Context) (bool, error) {
			if mode == "hang" {
				fmt.Println("reached notify")
				<-ctx.Done()
			}
			return true, nil
		})
		return err
	}, grit.HandlerConfig{Policy: "5 100ms 1s"})
	if err := c.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {} // until killed
}

// TestStepSurvivesSIGKILL: a worker SIGKILLed in a handler's second step;
// another worker resumes the task at its second step, and the first
// step's side effect happened once.
func TestStepSurvivesSIGKILL(t *testing.T) {
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			c := openDSN(t, d, grit.Config{})
			tk, err := c.Enqueue(context.Background(), "pay", charge{Order: "o-9"})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			charges := filepath.Join(dir, "charges")
			worker := func(mode string) *proctest.Proc {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), stepWorkerEnv+"="+mode, "GRIT_STORE="+d, "CHARGES="+charges)
				return proctest.Start(t, "step worker "+mode, cmd)
			}
			first := worker("hang")
			first.Await(t, "reached notify", 30*time.Second)
			if err := first.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			first.Wait(t, 10*time.Second)
			worker("finish")
			done := waitTaskFor(t, c, tk.ID, task.Success, 60*time.Second)
			b, _ := os.ReadFile(charges)
			if got := strings.Count(string(b), "charge o-9"); got != 1 {
				t.Errorf("the charge ran %d times, want once:\n%s", got, b)
			}
			ss := stepsOf(t, c, tk.ID)
			if done.Attempt != 2 || len(ss) != 2 || ss[0].Attempt != 1 || ss[1].Name != "notify" || ss[1].Attempt != 2 {
				t.Errorf("attempts %d, steps %+v: want the charge by attempt 1 and the notify by attempt 2", done.Attempt, ss)
			}
		})
	}
}
