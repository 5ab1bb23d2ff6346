package store

import "errors"

// ErrNoNotifications is what a Waker, CancelWatcher or PauseWatcher
// answers, wrapped, when the store cannot notify this process at all, as
// opposed to not for now: its connections go through a transaction
// pooler, where LISTEN has no session to stay on, and it was given no
// direct connection to listen on. A claimer polls instead, and does not
// ask again.
var ErrNoNotifications = errors.New("store: no notifications")

// Connector is an optional capability: how the store reaches its
// database, for grit status and the worker's log when it starts.
type Connector interface {
	Connections() Connections
}

// Connections says how a store reaches its database and how many
// connections a process may open to it through the store.
type Connections struct {
	// Pooled: the store's connections go through a connection pooler
	// (PgBouncer, …), which may run each transaction on another server
	// connection.
	Pooled bool `json:"pooled"`
	// Notify is where the store listens for notifications (a host, port
	// and database); "" when it cannot: claimers then poll.
	Notify string `json:"notify"`
	// Pool is the most connections of the store's pool, which every
	// statement but the heartbeats' goes through.
	Pool int `json:"pool"`
	// Heartbeats is the most connections of the heartbeats' own pool,
	// which a process opens only when it renews leases (a worker, and a
	// server for its remote workers).
	Heartbeats int `json:"heartbeats"`
	// Listen is the connections that listen for notifications: one for
	// the whole process while anything listens, none when Notify is "".
	Listen int `json:"listen"`
}

// Max is the most connections a process opens through the store: its pool,
// the heartbeats' when it heartbeats, and the listening one.
func (c Connections) Max(heartbeats bool) int {
	n := c.Pool + c.Listen
	if heartbeats {
		n += c.Heartbeats
	}
	return n
}
