package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/grit-run/grit/retry"
)

// job is one unit of work a hook runner puts on the cluster.
type job struct {
	Batch int `json:"batch"`
	N     int `json:"n"`
	// BadImage makes the job's image fail to pull: a permanent error.
	BadImage bool `json:"bad_image,omitempty"`
}

func (j job) String() string { return fmt.Sprintf("job %d.%d", j.Batch, j.N) }

// cluster simulates a compute cluster of fixed capacity. A job it has no
// room for fails at once with a scheduling timeout; every evictEvery-th
// job it starts is evicted once; both are resource pressure, worth
// retrying later. A job whose image does not exist fails for good.
type cluster struct {
	capacity   int
	jobTime    time.Duration
	evictEvery int

	mu         sync.Mutex
	running    int
	peak       int
	started    int
	rejected   int
	evicted    map[string]bool
	busy       time.Duration // job-time run, for utilization
	firstStart time.Time
	lastEnd    time.Time
}

var (
	errNoRoom    = errors.New("scheduling timeout: no node has room (0/4 nodes available: insufficient cpu)")
	errEvicted   = errors.New("evicted: the node was low on memory")
	errImagePull = errors.New("ErrImagePull: manifest unknown")
)

func newCluster(capacity int, jobTime time.Duration, evictEvery int) *cluster {
	return &cluster{capacity: capacity, jobTime: jobTime, evictEvery: evictEvery, evicted: map[string]bool{}}
}

// run runs a job to its end, or fails it as the cluster would.
func (c *cluster) run(ctx context.Context, j job) error {
	if j.BadImage {
		return retry.Permanent(fmt.Errorf("%s: %w", j, errImagePull))
	}
	c.mu.Lock()
	if c.running >= c.capacity {
		c.rejected++
		c.mu.Unlock()
		return retry.Resource(fmt.Errorf("%s: %w", j, errNoRoom))
	}
	c.running++
	c.started++
	c.peak = max(c.peak, c.running)
	evict := c.evictEvery > 0 && c.started%c.evictEvery == 0 && !c.evicted[j.String()]
	if evict {
		c.evicted[j.String()] = true
	}
	if c.firstStart.IsZero() {
		c.firstStart = time.Now()
	}
	c.mu.Unlock()
	begin := time.Now()
	d := c.jobTime
	if evict {
		d /= 2
	}
	t := time.NewTimer(d)
	defer t.Stop()
	var err error
	select {
	case <-t.C:
		if evict {
			err = retry.Resource(fmt.Errorf("%s: %w", j, errEvicted))
		}
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	c.mu.Lock()
	c.running--
	c.busy += time.Since(begin)
	c.lastEnd = time.Now()
	c.mu.Unlock()
	return err
}

// stats are what the cluster saw.
func (c *cluster) stats() (peak, rejected int, utilization float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	span := c.lastEnd.Sub(c.firstStart)
	if span > 0 {
		utilization = float64(c.busy) / float64(span) / float64(c.capacity)
	}
	return c.peak, c.rejected, utilization
}
