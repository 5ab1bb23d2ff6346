package server

import (
	"context"
	"sync"
	"time"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/internal/autotimeout"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// chosen is the auto timeout a claim's answer gave an attempt.
type chosen struct {
	d   time.Duration
	src string
}

// autoTimeouts chooses the auto timeouts of a claim's tasks and keeps
// them, by lease token, until the attempt's end is reported, so that the
// attempt's record says what the worker was told. An end reported to
// another server (or after a restart) is recorded without them.
type autoTimeouts struct {
	cache *autotimeout.Cache
	mu    sync.Mutex
	given map[int64]chosen
}

func newAutoTimeouts(st store.Store, set autotimeout.Settings) *autoTimeouts {
	return &autoTimeouts{cache: autotimeout.NewCache(st, set, time.Now), given: map[int64]chosen{}}
}

// set gives each claimed task that asks for an auto timeout its
// attempt's.
func (a *autoTimeouts) set(ctx context.Context, ts []*pb.Task) {
	for _, t := range ts {
		if !t.GetAutoTimeout() {
			continue
		}
		d, src := a.cache.Timeout(ctx, t.GetKind(), t.GetName())
		t.Timeout, t.TimeoutSource = dur(d), src
		a.mu.Lock()
		if len(a.given) >= maxSeen { // attempts never reported: forget them all
			clear(a.given)
		}
		a.given[t.GetLeaseToken()] = chosen{d, src}
		a.mu.Unlock()
	}
}

// record puts on f's attempt the auto timeout its claim gave it, if this
// server gave one.
func (a *autoTimeouts) record(t task.Task, f *store.Finish) {
	if t.Timeout != task.AutoTimeout {
		return
	}
	a.mu.Lock()
	c, ok := a.given[f.Token]
	delete(a.given, f.Token)
	a.mu.Unlock()
	if ok {
		autotimeout.Keep(f, c.d, c.src)
	}
}
