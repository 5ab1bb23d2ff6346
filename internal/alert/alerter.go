package alert

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// QueueSize bounds the alerts waiting for each receiver (the callback, the
// webhook). A flood is batched before anything is dropped: an alert like
// one still waiting (the same type, kind, group, schedule and fingerprint)
// is folded into it, its Tasks counting them. When the queue is full of
// alerts unlike each other, the oldest waiting is dropped for the new one:
// an alert is about now, and a receiver that comes back after a long
// silence hears the latest state rather than a stale backlog. The drops
// are logged, with their count, when delivery resumes, and counted (the
// metric grit_alerts_dropped_total).
const QueueSize = 1000

// WebhookParallel bounds the alerts the webhook delivers at once. Each is
// retried on its own: an alert the receiver refuses delays only itself,
// not the ones raised after it. (The callback is called one alert at a
// time, in order.)
const WebhookParallel = 4

// Alerter carries alerts to where Alerting sends them. A nil *Alerter
// sends nothing; its methods are safe to call.
type Alerter struct {
	dashboard string
	sinks     []*sink
}

// Dropped, if set, is told how many alerts a receiver dropped: its queue
// full, or undelivered at Stop.
type Dropped func(n int)

// New returns the alerter for a, or nil when a sends alerts nowhere. a
// must be valid (Alerting.Validate). Its goroutines start with the first
// alert; Stop ends them.
func New(a Alerting, log *slog.Logger, dropped Dropped) *Alerter {
	return newAlerter(a, log, dropped, nil)
}

// newAlerter is New with the webhook's delivery tuned (a test's quick
// backoff), when tune is set.
func newAlerter(a Alerting, log *slog.Logger, dropped Dropped, tune func(*webhook)) *Alerter {
	if !a.On() {
		return nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	al := &Alerter{dashboard: a.DashboardURL}
	if fn := a.OnAlert; fn != nil {
		al.sinks = append(al.sinks, newSink("callback", 1, log, dropped, func(_ context.Context, ev Event) { callback(fn, ev, log) }))
	}
	if a.AlertWebhook != "" {
		w := newWebhook(a.AlertWebhook, log)
		if tune != nil {
			tune(w)
		}
		al.sinks = append(al.sinks, newSink("webhook", WebhookParallel, log, dropped, w.deliver))
	}
	return al
}

// callback calls fn with ev; a panic in it is logged, not spread.
func callback(fn func(Event), ev Event, log *slog.Logger) {
	defer func() {
		if v := recover(); v != nil {
			log.Error("the alert callback panicked", "alert", ev.Type, "panic", fmt.Sprint(v))
		}
	}()
	fn(ev)
}

// Send queues ev for every receiver, with its Link filled in, and
// returns at once.
func (a *Alerter) Send(ev Event) {
	if a == nil {
		return
	}
	if ev.Link == "" {
		ev.Link = link(ev, a.dashboard)
	}
	for _, s := range a.sinks {
		s.put(ev)
	}
}

// Stop delivers the alerts still waiting until ctx ends, then drops the
// rest, logging how many. Alerts sent after Stop are dropped and logged.
func (a *Alerter) Stop(ctx context.Context) {
	if a == nil {
		return
	}
	var wg sync.WaitGroup
	for _, s := range a.sinks {
		wg.Go(func() { s.stop(ctx) })
	}
	wg.Wait()
}

// sink is one receiver's queue and the goroutine that drains it, with up
// to parallel deliveries at once.
type sink struct {
	name     string
	parallel int
	log      *slog.Logger
	onDrop   Dropped
	deliver  func(context.Context, Event)
	ctx      context.Context // ends the delivery in flight when Stop gives up
	cancel   context.CancelFunc
	wake     chan struct{}
	done     chan struct{}

	mu       sync.Mutex
	queue    []Event
	dropped  int // since the last logged
	started  bool
	stopping bool
}

func newSink(name string, parallel int, log *slog.Logger, dropped Dropped, deliver func(context.Context, Event)) *sink {
	ctx, cancel := context.WithCancel(context.Background())
	if dropped == nil {
		dropped = func(int) {}
	}
	return &sink{name: name, parallel: parallel, log: log, onDrop: dropped, deliver: deliver, ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
}

func (s *sink) put(ev Event) {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		s.log.Warn("alert dropped: the alerts have stopped", "receiver", s.name, "alert", ev.Type, "summary", ev.Summary)
		return
	}
	switch i := s.alike(ev); {
	case i >= 0:
		fold(&s.queue[i], ev)
	case len(s.queue) >= QueueSize:
		s.queue[0] = Event{}
		s.queue = s.queue[1:]
		s.dropped++
		s.onDrop(1)
		fallthrough
	default:
		s.queue = append(s.queue, ev)
	}
	if !s.started {
		s.started = true
		go s.run()
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run delivers the queue's alerts, up to parallel at once, each to its
// end (its retries included), until the sink stops.
func (s *sink) run() {
	defer close(s.done)
	slots := make(chan struct{}, s.parallel)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		// A slot first, then the alert: one taken from the queue is on
		// its way at once, and those still waiting may fold together.
		slots <- struct{}{}
		ev, ok := s.next()
		if !ok {
			return
		}
		wg.Go(func() {
			defer func() { <-slots }()
			s.deliver(s.ctx, ev)
		})
	}
}

// next waits for the next alert; false when the sink stops with none
// left.
func (s *sink) next() (Event, bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue[0] = Event{}
			s.queue = s.queue[1:]
			dropped := s.dropped
			s.dropped = 0
			s.mu.Unlock()
			if dropped > 0 {
				s.log.Warn("alerts dropped: their queue was full (the oldest go first)", "receiver", s.name, "dropped", dropped, "queue", QueueSize)
			}
			return ev, true
		}
		stopping := s.stopping
		s.mu.Unlock()
		if stopping {
			return Event{}, false
		}
		select {
		case <-s.wake:
		case <-s.ctx.Done():
			return Event{}, false
		}
	}
}

func (s *sink) stop(ctx context.Context) {
	s.mu.Lock()
	s.stopping = true
	started := s.started
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if !started {
		s.cancel()
		return
	}
	select {
	case <-s.done:
		s.cancel()
		return
	case <-ctx.Done():
	}
	s.cancel()
	s.mu.Lock()
	left := len(s.queue)
	s.queue = nil
	s.mu.Unlock()
	s.onDrop(left)
	// One more may be in flight, ended by the cancel; a callback that
	// ignores it is left to return on its own.
	s.log.Warn("alerts dropped at stop: not delivered before the stop deadline", "receiver", s.name, "waiting", left, "err", context.Cause(ctx))
}

// alike is the index of a waiting alert that ev would be folded into, or
// -1: one of the same type about the same thing (kind, group, schedule)
// failing alike (fingerprint). Alerts about tasks fold; a breaker's or an
// outage's, which say when it ends, do not.
func (s *sink) alike(ev Event) int {
	if ev.Type != DeadLetter && ev.Type != QuarantinedItems {
		return -1
	}
	for i := len(s.queue) - 1; i >= 0; i-- {
		q := &s.queue[i]
		if q.Type == ev.Type && q.Kind == ev.Kind && q.Group == ev.Group && q.Fingerprint == ev.Fingerprint && q.Queue == ev.Queue {
			return i
		}
	}
	return -1
}

// fold adds ev to q, an alert like it still waiting: Tasks counts the
// tasks (for a dead letter) or items (for quarantined ones) of both, and
// the summary says so; q keeps its first task as the example.
func fold(q *Event, ev Event) {
	n := func(e Event) int {
		if e.Type == DeadLetter {
			return max(e.Tasks, 1)
		}
		return e.Tasks
	}
	q.Tasks = n(*q) + n(ev)
	q.Time = ev.Time
	what := "tasks are DEAD_LETTER"
	if q.Type == QuarantinedItems {
		what = "items were set aside as quarantined"
	}
	q.Summary = fmt.Sprintf("%d %s (%s), failing alike, e.g. task %d: %s", q.Tasks, what, q.Kind, q.TaskID, firstLine(q.Error))
}
