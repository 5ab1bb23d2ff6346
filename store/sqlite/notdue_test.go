package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// notDue is how many tasks not yet due BenchmarkClaimBehindNotDue
// enqueues: GRIT_BENCH_NOT_DUE, default 100,000.
func notDue(b *testing.B) int {
	v := os.Getenv("GRIT_BENCH_NOT_DUE")
	if v == "" {
		return 100_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("GRIT_BENCH_NOT_DUE=%q: want a count of tasks, e.g. 1000000", v)
	}
	return n
}

// BenchmarkClaimBehindNotDue claims with nothing due (a worker's poll),
// with none waiting and with notDue tasks due in an hour, scheduled or
// RETRYING (as a retry waiting out its backoff is), in a run or not.
func BenchmarkClaimBehindNotDue(b *testing.B) {
	for _, waiting := range []int{0, notDue(b)} {
		for _, state := range []task.State{task.Ready, task.Retrying} {
			b.Run(fmt.Sprintf("waiting=%d/%s", waiting, state), func(b *testing.B) {
				ctx := context.Background()
				s, err := Open(ctx, filepath.Join(b.TempDir(), "grit.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				r, err := s.SubmitRun(ctx, task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a", Kind: "k", RunAt: time.Now().Add(time.Hour)}}})
				if err != nil {
					b.Fatal(err)
				}
				at := time.Now().Add(time.Hour)
				for done := 0; done < waiting; done += 5000 {
					ts := make([]task.NewTask, min(5000, waiting-done))
					for i := range ts {
						ts[i] = task.NewTask{Kind: "k", RunAt: at}
					}
					if _, err := s.Enqueue(ctx, ts); err != nil {
						b.Fatal(err)
					}
				}
				// Half of them in the run, to time its claim behind them too.
				_, err = s.w.conn.ExecContext(ctx, `UPDATE tasks SET state = ?, run_id = CASE WHEN id % 2 = 0 THEN ? END
					WHERE run_id IS NULL`, string(state), r.ID)
				if err != nil {
					b.Fatal(err)
				}
				metrics := map[string]float64{}
				for _, c := range []struct {
					name string
					req  store.ClaimRequest
				}{
					{"claim", store.ClaimRequest{Worker: "w", Limit: 100}},
					{"run", store.ClaimRequest{Worker: "w", Limit: 100, Run: r.ID}},
				} {
					begin := time.Now()
					for range 200 {
						if got, err := s.Claim(ctx, c.req); err != nil || len(got) != 0 {
							b.Fatalf("claimed %d (%v), want none due", len(got), err)
						}
					}
					metrics[c.name+"-µs"] = float64(time.Since(begin).Microseconds()) / 200
				}
				for b.Loop() {
					if _, err := s.Enqueue(ctx, []task.NewTask{{Kind: "k"}}); err != nil {
						b.Fatal(err)
					}
					got, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 100})
					if err != nil || len(got) != 1 {
						b.Fatalf("claimed %d (%v), want the one due", len(got), err)
					}
					if _, err := s.Finish(ctx, []store.Finish{{TaskID: got[0].ID, Token: got[0].LeaseToken, State: task.Success}}); err != nil {
						b.Fatal(err)
					}
				}
				for unit, v := range metrics { // after the loop, which resets them
					b.ReportMetric(v, unit)
				}
			})
		}
	}
}
