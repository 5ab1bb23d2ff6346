package gritbench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/api/client"
	"github.com/grit-run/grit/store"
)

// checkAPI checks the API figures of a run with cfg: both modes measured,
// the ratios taken, batches as large as asked. It asserts no speed.
func checkAPI(t *testing.T, cfg Config, r Result) {
	t.Helper()
	a := r.APIEnqueue
	if a.APITasks != cfg.APITasks || a.APICallers != cfg.APICallers || a.APIBatch != cfg.APIBatch {
		t.Errorf("API sizes %+v, want %d tasks, %d callers, batches of %d", a, cfg.APITasks, cfg.APICallers, cfg.APIBatch)
	}
	if a.APISinglePerSec <= 0 || a.APIBatchedPerSec <= 0 || a.APIBatchedVsSingle <= 0 || a.APIBatchedVsDirect <= 0 {
		t.Errorf("API figures %+v", a)
	}
	// Every caller sends its whole share before it waits, so batches fill
	// (but one cut early by the flush interval on a slow machine is fine).
	if a.APIBatchMean <= 1 || a.APIBatchMean > float64(cfg.APIBatch) {
		t.Errorf("%v tasks per EnqueueBatch call, asked for %d", a.APIBatchMean, cfg.APIBatch)
	}
}

// TestAPIEnqueue runs only the API step, with callers that do not share
// the tasks evenly; overAPI's own check found the store holding exactly
// the tasks sent.
func TestAPIEnqueue(t *testing.T) {
	t.Parallel()
	cfg := Config{APITasks: 203, APICallers: 7, APIBatch: 20}
	cfg.defaults()
	r := Result{EnqueuePerSec: 1}
	if err := apiEnqueue(context.Background(), sqliteTargets(t), cfg, &r); err != nil {
		t.Fatal(err)
	}
	checkAPI(t, cfg, r)
	t.Logf("%+v", r.APIEnqueue)
}

// TestOverAPIStoresEachTaskOnce counts, apart from overAPI's own check,
// the tasks the store holds after each mode: the SQLite file is opened
// again after the measurement closed it.
func TestOverAPIStoresEachTaskOnce(t *testing.T) {
	t.Parallel()
	for name, mode := range map[string]apiMode{"single": enqueueEach, "batched": sendAll} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			open := sqliteTargets(t)
			var dsn string
			keep := func() (Target, error) {
				tg, err := open()
				dsn = tg.DSN
				return tg, err
			}
			cfg := Config{APITasks: 120, APICallers: 4, APIBatch: 50}
			if _, _, err := overAPI(context.Background(), keep, cfg, mode); err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if n, err := countAll(context.Background(), st); err != nil || n != 120 {
				t.Errorf("store holds %d tasks (%v), want 120", n, err)
			}
		})
	}
}

// TestOverAPIFailsOnAnError makes every call fail: the bench ends with an
// error that names the caller and the task, instead of a figure.
func TestOverAPIFailsOnAnError(t *testing.T) {
	t.Parallel()
	fail := func(ctx context.Context, c *client.Client, share int) ([]int64, error) {
		return nil, errors.New("refused")
	}
	cfg := Config{APITasks: 10, APICallers: 2, APIBatch: 5}
	_, _, err := overAPI(context.Background(), sqliteTargets(t), cfg, fail)
	if err == nil || !strings.Contains(err.Error(), "caller ") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("err %v", err)
	}
}

// TestOverAPIChecksTheCount finds a task missing from the answers.
func TestOverAPIChecksTheCount(t *testing.T) {
	t.Parallel()
	short := func(ctx context.Context, c *client.Client, share int) ([]int64, error) {
		ids, err := enqueueEach(ctx, c, share)
		return ids[1:], err
	}
	cfg := Config{APITasks: 4, APICallers: 1, APIBatch: 5}
	_, _, err := overAPI(context.Background(), sqliteTargets(t), cfg, short)
	if err == nil || !strings.Contains(err.Error(), "4 tasks sent, 3 answered") {
		t.Errorf("err %v", err)
	}
}

// TestBatchedFuturesFailTheBench sends, with the client's retries off, to
// a port where no server listens: the futures fail, and the callers end
// with an error naming the first task that failed.
func TestBatchedFuturesFailTheBench(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(client.Config{Addr: "127.0.0.1:1", SendRetries: -1, FlushInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	_, err = callers(ctx, 2, 6, func(ctx context.Context, share int) ([]int64, error) { return sendAll(ctx, c, share) })
	if err == nil || !strings.Contains(err.Error(), "task 1 of 3") {
		t.Errorf("err %v", err)
	}
}
