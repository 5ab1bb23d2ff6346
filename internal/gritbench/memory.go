package gritbench

import (
	"context"
	"fmt"
	"time"
)

// workerMemory has one worker process work cfg.MemoryTasks no-op tasks,
// enqueued as it goes so that a backlog of at most a few batches waits,
// and samples its resident set each tenth of the way.
func workerMemory(ctx context.Context, open Opener, cfg Config, r *Result) error {
	return withTarget(open, func(tg Target) error {
		ws, err := spawnN(ctx, cfg, tg.DSN, 1)
		if err != nil {
			return err
		}
		w := ws[0]
		defer w.kill()
		pid := w.cmd.Process.Pid
		if _, _, ok := memory(pid); !ok {
			return fmt.Errorf("cannot read the memory of process %d (Linux /proc only)", pid)
		}
		n, ahead := cfg.MemoryTasks, 20*cfg.Batch
		enqueued := 0
		enqueue := func(finished int) error {
			for enqueued < n && enqueued-finished < ahead {
				k := min(cfg.Batch, n-enqueued)
				if err := enqueueNoops(ctx, tg, k, k); err != nil {
					return err
				}
				enqueued += k
			}
			return nil
		}
		if err := enqueue(0); err != nil {
			return err
		}
		if err := w.start(ctx); err != nil {
			return err
		}
		begin, next := time.Now(), n/10
		err = follow(ctx, w, n, func(finished int) error {
			for finished >= next && next <= n {
				rss, _, _ := memory(pid)
				r.MemoryMiB = append(r.MemoryMiB, rss)
				next += n / 10
			}
			return enqueue(finished)
		})
		if err != nil {
			return err
		}
		_, r.MemoryPeakMiB, _ = memory(pid)
		r.MemoryTasks, r.MemoryPerSec = n, float64(n)/time.Since(begin).Seconds()
		return w.stop()
	})
}

// follow calls progress with the worker's count of recorded results each
// time it reports one, until it reaches n. It gives up when no result
// comes for stall.
func follow(ctx context.Context, w *workerProc, n int, progress func(int) error) error {
	t := time.NewTimer(stall)
	defer t.Stop()
	for finished := 0; finished < n; {
		select {
		case l, ok := <-w.lines:
			if !ok {
				return fmt.Errorf("worker process ended after %d of %d tasks: %s", finished, n, w.stderr)
			}
			if k, ok := finishedCount(l); ok {
				if k > finished {
					t.Reset(stall)
				}
				finished = k
				if err := progress(k); err != nil {
					return err
				}
			}
		case <-t.C:
			return stalled(finished, n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
