package grit_test

import (
	"context"
	"encoding/json"
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
	"github.com/grit-run/grit/task"
)

func send(t *testing.T, c *grit.Client, id int64, topic string, payload any) task.Message {
	t.Helper()
	m, err := c.SendToTask(context.Background(), id, topic, payload)
	if err != nil {
		t.Fatalf("send %v on %q to task %d: %v", payload, topic, id, err)
	}
	return m
}

func enqueue(t *testing.T, c *grit.Client, kind string) int64 {
	t.Helper()
	tk, err := c.Enqueue(context.Background(), kind, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	return tk.ID
}

// TestReceiveFreesTheSlot: a handler waiting for a message holds no slot
// (another task runs on the only one, and sends the message 1.5s after
// the wait began) and uses no attempt, and the message wakes it at once,
// long before its timeout.
func TestReceiveFreesTheSlot(t *testing.T) {
	t.Parallel()
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := openDSN(t, dsn(t), grit.Config{Concurrency: 1})
			var got atomic.Value
			grit.Handle(c, "waiter", func(ctx context.Context, _ struct{}) error {
				v, err := grit.Receive[string](ctx, "go", time.Minute)
				if err != nil {
					return err
				}
				got.Store(v)
				return nil
			}, grit.HandlerConfig{})
			var waiter int64
			var sentAt atomic.Int64
			grit.Handle(c, "sender", func(ctx context.Context, _ struct{}) error {
				select { // holds the only slot meanwhile
				case <-time.After(1500 * time.Millisecond):
				case <-ctx.Done():
					return ctx.Err()
				}
				sentAt.Store(time.Now().UnixNano())
				_, err := c.SendToTask(ctx, waiter, "go", "hello")
				return err
			}, grit.HandlerConfig{})
			waiter = enqueue(t, c, "waiter")
			startClient(t, c)
			w := waitTask(t, c, waiter, task.Sensing)
			if w.Attempt != 0 || w.Snoozes != 0 {
				t.Errorf("waiting: attempt %d, snoozes %d; want the attempt given back and no snooze counted", w.Attempt, w.Snoozes)
			}
			sender := enqueue(t, c, "sender")
			waitTask(t, c, sender, task.Success)
			done := waitTask(t, c, waiter, task.Success)
			if v, _ := got.Load().(string); v != "hello" {
				t.Errorf("received %q, want hello", v)
			}
			if late := done.FinishedAt.Sub(time.Unix(0, sentAt.Load())); late > 10*time.Second {
				t.Errorf("the waiter ended %v after the message was sent: it was not woken by it", late)
			}
			as, _ := c.Attempts(context.Background(), waiter)
			if done.Attempt != 1 || len(as) != 2 || as[0].Outcome != task.OutcomeSnoozed {
				t.Errorf("attempt %d, attempts %+v: want a wait given back, then one attempt", done.Attempt, as)
			}
			ss := stepsOf(t, c, waiter)
			if len(ss) != 2 || ss[0].Name != "receive.deadline:go" || ss[1].Name != "receive:go" {
				t.Errorf("steps %+v, want the deadline then the message", ss)
			}
		})
	}
}

// TestReceiveTimesOut: with no message, a receive fails after its
// timeout with an error matching ErrReceiveTimeout, and not before.
func TestReceiveTimesOut(t *testing.T) {
	t.Parallel()
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := openDSN(t, dsn(t), grit.Config{})
			var timedOut atomic.Bool
			grit.Handle(c, "waiter", func(ctx context.Context, _ struct{}) error {
				_, err := grit.Receive[string](ctx, "go", 500*time.Millisecond)
				if errors.Is(err, grit.ErrReceiveTimeout) {
					timedOut.Store(true)
					return nil
				}
				return err
			}, grit.HandlerConfig{})
			id := enqueue(t, c, "waiter")
			startClient(t, c)
			waitTask(t, c, id, task.Success)
			if !timedOut.Load() {
				t.Fatal("the receive did not answer ErrReceiveTimeout")
			}
			ss := stepsOf(t, c, id)
			if len(ss) != 2 || string(ss[1].Result) != `{"timeout":true}` {
				t.Fatalf("steps %+v, want the deadline, then the timeout", ss)
			}
			// The deadline is the store's time when the receive was first
			// reached plus the timeout, by the engine's reading of the
			// store's clock (measured once, to within a round trip: the
			// 50ms below); the timeout is recorded after it.
			var d task.ReceiveDeadline
			if err := json.Unmarshal(ss[0].Result, &d); err != nil {
				t.Fatalf("the deadline step records %s: %v", ss[0].Result, err)
			}
			if d.Until.Sub(ss[0].RecordedAt) > 500*time.Millisecond || ss[1].RecordedAt.Before(d.Until.Add(-50*time.Millisecond)) {
				t.Errorf("deadline %v recorded at %v, timeout recorded at %v: want a deadline within 500ms of its record, and the timeout at or after it",
					d.Until, ss[0].RecordedAt, ss[1].RecordedAt)
			}
		})
	}
}

// TestReceiveGetsWhatWasSentBefore: a message sent before the handler
// reaches Receive is kept for it; messages of a topic come oldest first;
// topics are apart; and a retried attempt answers what was received
// without waiting or taking another.
func TestReceiveGetsWhatWasSentBefore(t *testing.T) {
	t.Parallel()
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := openDSN(t, dsn(t), grit.Config{})
			var runs atomic.Int64
			var seen atomic.Value
			grit.Handle(c, "reader", func(ctx context.Context, _ struct{}) error {
				var out []string
				for _, topic := range []string{"a", "a", "b"} {
					v, err := grit.Receive[string](ctx, topic, time.Minute)
					if err != nil {
						return err
					}
					out = append(out, topic+"="+v)
				}
				seen.Store(strings.Join(out, ","))
				if runs.Add(1) == 1 {
					return retry.Transient(errors.New("downstream reset"))
				}
				return nil
			}, grit.HandlerConfig{Policy: "3 10ms 10ms"})
			id := enqueue(t, c, "reader")
			send(t, c, id, "b", "b1")
			send(t, c, id, "a", "a1")
			send(t, c, id, "a", "a2")
			send(t, c, id, "a", "a3")
			startClient(t, c)
			done := waitTask(t, c, id, task.Success)
			if got, _ := seen.Load().(string); got != "a=a1,a=a2,b=b1" || runs.Load() != 2 {
				t.Errorf("received %q in %d runs, want a=a1,a=a2,b=b1 on both", got, runs.Load())
			}
			as, _ := c.Attempts(context.Background(), id)
			if done.Attempt != 2 || len(as) != 2 {
				t.Errorf("attempt %d, attempts %+v: want two, neither waiting", done.Attempt, as)
			}
			left, err := c.Messages(context.Background(), id)
			if err != nil || len(left) != 1 || string(left[0].Payload) != `"a3"` {
				t.Errorf("messages left %+v (%v), want a3 alone: the retry took no other", left, err)
			}
			if _, err := c.SendToTask(context.Background(), id, "a", "late"); !errors.Is(err, task.ErrWrongState) {
				t.Errorf("a message to a task that ended: %v, want ErrWrongState", err)
			}
		})
	}
}

// receiveWorkerEnv runs this test binary as a worker of the receive
// process test (see TestMain).
const receiveWorkerEnv = "GRIT_TEST_RECEIVE_WORKER"

// receiveWorker works "inbox" tasks on the store GRIT_STORE names: a step
// "before" that appends to the file LOG, a receive of "go", then a step
// "after" that, in mode "hang", prints "reached after" and waits to be
// killed, and in mode "finish" appends the message to LOG.
func receiveWorker(mode string) int {
	ctx := context.Background()
	c, err := grit.Open(ctx, os.Getenv("GRIT_STORE"), grit.Config{Lease: 2 * time.Second, Heartbeat: 200 * time.Millisecond, WorkerID: "receive-worker"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	appendLog := func(line string) error {
		f, err := os.OpenFile(os.Getenv("LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = fmt.Fprintln(f, line)
		return err
	}
	grit.Handle(c, "inbox", func(ctx context.Context, _ struct{}) error {
		if _, err := grit.Step(ctx, "before", func(context.Context) (bool, error) { return true, appendLog("before") }); err != nil {
			return err
		}
		fmt.Println("reached receive")
		m, err := grit.Receive[string](ctx, "go", time.Minute)
		if err != nil {
			return err
		}
		_, err = grit.Step(ctx, "after", func(ctx context.Context) (bool, error) {
			if mode == "hang" {
				fmt.Println("reached after")
				<-ctx.Done()
				return false, ctx.Err()
			}
			return true, appendLog("after " + m)
		})
		return err
	}, grit.HandlerConfig{Policy: "5 100ms 1s"})
	if err := c.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {} // until killed
}

// TestReceiveSurvivesSIGKILL: a worker SIGKILLed while its handler waits
// for a message, and another SIGKILLed after its handler received it:
// the message is neither lost nor taken twice, and no step runs twice.
func TestReceiveSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	for name, dsn := range stepDSNs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := dsn(t)
			c := openDSN(t, d, grit.Config{})
			id := enqueue(t, c, "inbox")
			log := filepath.Join(t.TempDir(), "log")
			worker := func(mode string) *proctest.Proc {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), receiveWorkerEnv+"="+mode, "GRIT_STORE="+d, "LOG="+log)
				return proctest.Start(t, "receive worker "+mode, cmd)
			}
			kill := func(p *proctest.Proc) {
				if err := p.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				p.Wait(t, 10*time.Second)
			}
			first := worker("hang")
			first.Await(t, "reached receive", 30*time.Second)
			waitTask(t, c, id, task.Sensing)
			kill(first) // while its handler waits
			send(t, c, id, "go", "m1")
			send(t, c, id, "go", "m2")
			second := worker("hang")
			second.Await(t, "reached after", 30*time.Second)
			kill(second) // after it received m1
			worker("finish")
			done := waitTaskFor(t, c, id, task.Success, 60*time.Second)
			b, _ := os.ReadFile(log)
			if string(b) != "before\nafter m1\n" {
				t.Errorf("the steps' effects:\n%s\nwant before once, then after m1 once", b)
			}
			left, _ := c.Messages(context.Background(), id)
			if len(left) != 1 || string(left[0].Payload) != `"m2"` {
				t.Errorf("messages left %+v, want m2: m1 was taken once", left)
			}
			ss := stepsOf(t, c, id)
			names := make([]string, len(ss))
			for i, s := range ss {
				names[i] = s.Name
			}
			if strings.Join(names, ",") != "before,receive.deadline:go,receive:go,after" {
				t.Errorf("steps %v (task at attempt %d)", names, done.Attempt)
			}
		})
	}
}

// TestReceiveRefusals: bad arguments fail the task at once, saying so.
func TestReceiveRefusals(t *testing.T) {
	t.Parallel()
	c := open(t)
	grit.Handle(c, "bad", func(ctx context.Context, _ struct{}) error {
		_, err := grit.Receive[string](ctx, "", time.Second)
		return err
	}, grit.HandlerConfig{})
	id := enqueue(t, c, "bad")
	startClient(t, c)
	if got := waitTask(t, c, id, task.Failed); got.Attempt != 1 || !strings.Contains(got.LastError, "topic") {
		t.Errorf("an empty topic: attempt %d, %q; want a permanent failure naming the topic", got.Attempt, got.LastError)
	}
	if _, err := grit.Receive[string](context.Background(), "a", time.Second); !errors.Is(err, grit.ErrNoAttempt) {
		t.Errorf("a receive outside a handler: %v, want ErrNoAttempt", err)
	}
}
