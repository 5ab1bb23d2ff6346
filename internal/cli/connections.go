package cli

import (
	"fmt"
	"io"

	"github.com/grit-run/grit/internal/gate"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
)

// connectionsStatus is how the store reaches its database, as grit status
// shows it (a store.Connector's Connections), with the most connections
// each kind of process opens on these settings.
type connectionsStatus struct {
	store.Connections
	// Notifications is "listen" (woken at once) or "poll" (every Poll).
	Notifications string `json:"notifications"`
	Poll          string `json:"poll,omitempty"`
	// Worker, Server and Dashboard are the most connections grit worker
	// (and grit run), grit server and grit dashboard open: the pool, the
	// heartbeats' (workers renew their leases, a server its remote
	// workers'), and the listening connection (the dashboard listens for
	// nothing).
	Worker    int `json:"worker"`
	Server    int `json:"server"`
	Dashboard int `json:"dashboard"`
}

// statusConnections is how st reaches its database, if it is a
// store.Connector; nil otherwise.
func statusConnections(st store.Store) *connectionsStatus {
	c, ok := st.(store.Connector)
	if !ok {
		return nil
	}
	cs := c.Connections()
	out := &connectionsStatus{Connections: cs, Notifications: "listen",
		Worker: cs.Max(true), Server: cs.Max(true), Dashboard: cs.Pool}
	if cs.Notify == "" {
		out.Notifications, out.Poll = "poll", retry.FormatDuration(gate.DefaultPoll)
	}
	return out
}

func printConnections(w io.Writer, c *connectionsStatus) {
	if c == nil {
		return
	}
	if c.Pooled {
		fmt.Fprintln(w, "connections: through a connection pooler: nothing is set on a session and no statement is prepared by name")
	} else {
		fmt.Fprintln(w, "connections: direct to PostgreSQL")
	}
	if c.Notifications == "poll" {
		fmt.Fprintf(w, "notifications: none through the pooler: workers and servers poll every %s (give --notify-store, GRIT_NOTIFY_STORE, a direct connection to wake them at once)\n", c.Poll)
	} else {
		fmt.Fprintf(w, "notifications: direct, LISTEN on %s\n", c.Notify)
	}
	fmt.Fprintf(w, "connections at most: %d per worker (pool %d, heartbeats %d, listening %d), %d per server, %d per dashboard\n\n",
		c.Worker, c.Pool, c.Heartbeats, c.Listen, c.Server, c.Dashboard)
}
