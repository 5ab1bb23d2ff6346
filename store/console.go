package store

import (
	"fmt"
	"time"

	"github.com/grit-run/grit/task"
)

// MaxSeriesBuckets bounds the buckets of an AttemptSeries: a chart has no
// use for more, and a step too small for its window would otherwise have
// the store build millions of them.
const MaxSeriesBuckets = 10000

// SeriesBuckets returns the empty buckets of an AttemptSeries from since
// to now, step long, oldest first: the last one holds now (none when
// since is after now). Every driver builds its answer on them, so a
// bucket with nothing in it is still there, and a chart has no gaps to
// guess at.
func SeriesBuckets(since, now time.Time, step time.Duration) ([]AttemptBucket, error) {
	if step <= 0 {
		return nil, fmt.Errorf("attempt series: step %v: %w (give a positive step, e.g. 1m)", step, task.ErrInvalid)
	}
	if since.After(now) {
		return nil, nil // nothing has ended yet (the caller's clock may be ahead of the store's)
	}
	n := now.Sub(since)/step + 1
	if n > MaxSeriesBuckets {
		return nil, fmt.Errorf("attempt series: %d buckets of %v since %v, more than %d: %w (widen the step or shorten the window)",
			n, step, since, MaxSeriesBuckets, task.ErrInvalid)
	}
	out := make([]AttemptBucket, n)
	for i := range out {
		out[i] = AttemptBucket{At: since.Add(time.Duration(i) * step), Outcomes: map[task.Outcome]int{}}
	}
	return out, nil
}

// AddToSeries counts n attempts with outcome o in bucket i of bs (from
// SeriesBuckets): the attempts that ended in [since+i*step,
// since+(i+1)*step), which a driver counts in its query. An attempt that
// ended after the store's now was read goes into the last bucket.
func AddToSeries(bs []AttemptBucket, i int64, o task.Outcome, n int) {
	if len(bs) == 0 || i < 0 {
		return
	}
	bs[min(i, int64(len(bs)-1))].Outcomes[o] += n
}
