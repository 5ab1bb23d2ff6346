package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
)

// unnotifying is a store that can never notify (a PostgreSQL store behind
// a transaction pooler, without a direct connection for LISTEN).
type unnotifying struct {
	*sqlite.Store
	asked atomic.Int64
}

func (u *unnotifying) Wake(context.Context) (<-chan struct{}, error) {
	u.asked.Add(1)
	return nil, fmt.Errorf("wake: %w", store.ErrNoNotifications)
}

// TestNoNotificationsPolls: a worker whose store can never notify says
// once, at INFO, that it polls and how often, asks no more, and warns of
// nothing.
func TestNoNotificationsPolls(t *testing.T) {
	t.Parallel()
	st := &unnotifying{Store: newSQLite(t)}
	cfg := testConfig(st)
	var logs lockedLog
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	e := start(t, cfg)
	poll.Until(t, 10*time.Second, "the worker to say it polls", func() bool {
		return strings.Contains(logs.String(), "it finds work enqueued by other processes by polling")
	})
	e.Stop(t.Context())
	got := logs.String()
	if n := st.asked.Load(); n != 1 {
		t.Errorf("Wake was asked %d times, want once", n)
	}
	if !strings.Contains(got, "level=INFO msg=\"the store cannot notify this worker") || !strings.Contains(got, "poll=200ms") {
		t.Errorf("logs\n%s\nwant an INFO line saying the worker polls every 200ms (its Poll)", got)
	}
	if strings.Contains(got, "level=WARN") {
		t.Errorf("logs\n%s\nwant no warning: polling is how this store works", got)
	}
}
