package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
)

// reconnectBackoff spaces the listener's attempts to reconnect: quick at
// first, then every few seconds at most, jittered so that a fleet that
// lost its database at once does not come back at once.
var reconnectBackoff = retry.Exponential{Min: 50 * time.Millisecond, Max: 5 * time.Second}

// Wake listens, on the store's listening connection (listenTo), for the
// notifications that Enqueue, EnqueueTx, SubmitRun, Finish and Act send
// when a task becomes READY, RETRYING or SENSING in the store's schema
// (from any process), and returns a channel that receives a value after
// each. Values do not queue
// up: one waiting value stands for any number of notifications, so a
// worker woken should claim until nothing is due, and arm a timer for
// NextDue.
//
// When the connection drops, Wake reconnects with a capped, jittered
// backoff, for as long as it takes, and sends a value once it listens
// again: notifications sent meanwhile are lost, so the worker should look.
// The channel is closed when ctx ends or the Store closes. Only the first
// connection's failure is returned as an error, and
// store.ErrNoNotifications when the store has nowhere to listen.
//
// Wake makes the store a store.Waker, an optional capability the engine
// finds by type assertion, whose wakes come from every process on the
// schema (storetest.WakesAcrossHandles).
func (s *Store) Wake(ctx context.Context) (<-chan struct{}, error) {
	woken := make(chan struct{}, 1)
	wake := func(string) { signal(woken) }
	if err := s.listenTo(ctx, s.channel, wake, func() { close(woken) }); err != nil {
		return nil, fmt.Errorf("postgres: wake: %w", err)
	}
	return woken, nil
}

// WatchCancels makes the store a store.CancelWatcher whose cancels come
// from every process on the schema: Act notifies a channel of its own with
// the id of a running task it cancels, on commit, and WatchCancels listens
// to it on the store's listening connection, reconnecting as Wake does
// (cancels sent meanwhile are lost: the next heartbeat finds them).
func (s *Store) WatchCancels(ctx context.Context) (<-chan int64, error) {
	ids := make(chan int64, 256)
	got := func(payload string) {
		if id, err := strconv.ParseInt(payload, 10, 64); err == nil {
			select {
			case ids <- id:
			default: // the watcher is behind: its heartbeat will tell it
			}
		}
	}
	if err := s.listenTo(ctx, s.cancelChannel, got, func() { close(ids) }); err != nil {
		return nil, fmt.Errorf("postgres: watch cancels: %w", err)
	}
	return ids, nil
}

// A watcher is one Wake, WatchCancels or WatchPauses: the channel it
// listens to and what it does with each notification's payload.
type watcher struct {
	channel string
	got     func(payload string)
}

// listenTo calls got with the payload of each notification on channel,
// and with "" after the listening connection was replaced (what was sent
// meanwhile is lost), until ctx ends or the Store closes, then calls
// done. Every watcher of the Store shares one connection, which listens
// to all the Store's channels: it opens with the first watcher, its
// failure then is returned, and closes after the last. Without a
// connection to listen on (a pooler, and no NotifyDSN) it fails with
// store.ErrNoNotifications.
func (s *Store) listenTo(ctx context.Context, channel string, got func(payload string), done func()) error {
	if s.listenOn == nil {
		return fmt.Errorf("%w: the store's connections go through a connection pooler, where LISTEN has no session of its own; "+
			"name a direct connection to the server for notifications (Config.NotifyDSN, grit --notify-store, GRIT_NOTIFY_STORE), else claimers poll", store.ErrNoNotifications)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.life.Err() != nil {
		return ErrClosed
	}
	if s.stopListening == nil {
		conn, err := s.listen(ctx)
		if err != nil {
			return err
		}
		loop, stop := context.WithCancel(s.life)
		s.stopListening = stop
		s.listeners.Go(func() { s.listenLoop(loop, conn) })
	}
	w := &watcher{channel: channel, got: got}
	s.watchers[w] = struct{}{}
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(s.life, cancel) // Close ends the watcher too
	s.listeners.Add(1)
	context.AfterFunc(ctx, func() {
		defer s.listeners.Done()
		unhook()
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.watchers, w)
		done()
		if len(s.watchers) == 0 {
			s.stopListening()
			s.stopListening = nil
		}
	})
	return nil
}

// listen opens a connection of its own on the notify DSN and listens on
// the Store's channels.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.listenOn)
	if err != nil {
		return nil, err
	}
	var listen []string
	for _, ch := range []string{s.channel, s.cancelChannel, s.pauseChannel} {
		listen = append(listen, "LISTEN "+pgx.Identifier{ch}.Sanitize())
	}
	if _, err := conn.Exec(ctx, strings.Join(listen, "; ")); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

// listenLoop passes each notification on conn to the watchers of its
// channel, and replaces conn when it fails, until ctx ends.
func (s *Store) listenLoop(ctx context.Context, conn *pgx.Conn) {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err == nil {
			s.notified(n.Channel, n.Payload)
			continue
		}
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		conn.Close(closeCtx)
		cancel()
		if conn = s.relisten(ctx); conn == nil {
			return // ctx ended
		}
		s.notified("", "") // what was sent while we were away is lost
	}
}

// notified passes a notification's payload to the watchers of its
// channel; channel "" is every watcher.
func (s *Store) notified(channel, payload string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		if channel == "" || w.channel == channel {
			w.got(payload)
		}
	}
}

// relisten reconnects and listens again, retrying with reconnectBackoff
// until it succeeds or ctx ends (then it returns nil).
func (s *Store) relisten(ctx context.Context) *pgx.Conn {
	for n := 1; ; n++ {
		if ctx.Err() != nil {
			return nil
		}
		if conn, err := s.listen(ctx); err == nil {
			return conn
		}
		t := time.NewTimer(reconnectBackoff.Delay(n, 0, retry.DefaultRand))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// signal leaves a value in woken unless one is already waiting.
func signal(woken chan<- struct{}) {
	select {
	case woken <- struct{}{}:
	default:
	}
}
