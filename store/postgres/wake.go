package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/grit-run/grit/retry"
)

// reconnectBackoff spaces the listener's attempts to reconnect: quick at
// first, then every few seconds at most, jittered so that a fleet that
// lost its database at once does not come back at once.
var reconnectBackoff = retry.Exponential{Min: 50 * time.Millisecond, Max: 5 * time.Second}

// Wake listens, on a connection of its own, for the notifications that
// Enqueue, EnqueueTx, SubmitRun, Finish and Act send when a task becomes
// READY, RETRYING or SENSING in the store's schema (from any process), and
// returns a channel that receives a value after each. Values do not queue
// up: one waiting value stands for any number of notifications, so a
// worker woken should claim until nothing is due, and arm a timer for
// NextDue.
//
// When the connection drops, Wake reconnects with a capped, jittered
// backoff, for as long as it takes, and sends a value once it listens
// again: notifications sent meanwhile are lost, so the worker should look.
// The channel is closed when ctx ends or the Store closes. Only the first
// connection's failure is returned as an error.
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
// to it on a connection of its own, reconnecting as Wake does (cancels
// sent meanwhile are lost: the next heartbeat finds them).
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

// listenTo listens on channel, on a connection of its own, until ctx ends
// or the Store closes, then calls done. It calls got with each
// notification's payload, and with "" after reconnecting (what was sent
// meanwhile is lost). Only the first connection's failure is returned.
func (s *Store) listenTo(ctx context.Context, channel string, got func(payload string), done func()) error {
	conn, err := s.listen(ctx, channel)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.life.Err() != nil {
		conn.Close(context.WithoutCancel(ctx))
		return ErrClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.life, cancel) // Close ends the listener too
	s.listeners.Add(1)
	go func() {
		defer s.listeners.Done()
		defer stop()
		defer cancel()
		defer done()
		s.listenLoop(ctx, conn, channel, got)
	}()
	return nil
}

// listen opens a connection of its own and listens on channel.
func (s *Store) listen(ctx context.Context, channel string) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

// listenLoop passes each notification on conn to got, and replaces conn
// when it fails, until ctx ends.
func (s *Store) listenLoop(ctx context.Context, conn *pgx.Conn, channel string, got func(string)) {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err == nil {
			got(n.Payload)
			continue
		}
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		conn.Close(closeCtx)
		cancel()
		if conn = s.relisten(ctx, channel); conn == nil {
			return // ctx ended
		}
		got("") // what was sent while we were away is lost
	}
}

// relisten reconnects and listens again, retrying with reconnectBackoff
// until it succeeds or ctx ends (then it returns nil).
func (s *Store) relisten(ctx context.Context, channel string) *pgx.Conn {
	for n := 1; ; n++ {
		if ctx.Err() != nil {
			return nil
		}
		if conn, err := s.listen(ctx, channel); err == nil {
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
