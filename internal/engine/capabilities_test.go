package engine

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

// complete is a store with every capability, the optional ones too.
type complete struct {
	*sqlite.Store
}

func (complete) Wake(ctx context.Context) (<-chan struct{}, error) {
	ch := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ch) })
	return ch, nil
}

func (complete) Advice(context.Context) ([]string, error) { return nil, nil }

func (complete) EnqueueIn(context.Context, any, []task.NewTask) ([]task.Enqueued, error) {
	return nil, nil
}

func (complete) PublishIn(context.Context, any, []task.Event) ([]task.Task, error) { return nil, nil }

func (complete) WALPosition(context.Context) (store.WALPosition, error) {
	return store.WALPosition{}, nil
}

func (complete) Connections() store.Connections { return store.Connections{} }

// TestStartLogsMissingOptionalCapabilities: a worker says once, when it
// starts, which optional capabilities its store lacks (SQLite has no
// Advisor, no InTx and no Connector), and says nothing of them when it lacks none.
func TestStartLogsMissingOptionalCapabilities(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		st   store.Store
		want int
	}{
		"SQLite":   {newSQLite(t), 1},
		"complete": {complete{newSQLite(t)}, 0},
	} {
		cfg := testConfig(c.st)
		var logs lockedLog
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		e := start(t, cfg)
		e.Stop(t.Context())
		got := logs.String()
		if n := strings.Count(got, "lacks optional capabilities"); n != c.want {
			t.Errorf("%s: %d lines on missing optional capabilities, want %d:\n%s", name, n, c.want, got)
		}
		if c.want > 0 && (!strings.Contains(got, "level=INFO msg=\"the store lacks optional capabilities\" missing=\"advice on the database's setup (") ||
			strings.Contains(got, "store.") || strings.Contains(got, "*sqlite")) {
			t.Errorf("%s: logs\n%s\nwant an INFO line saying what the lack of advice costs, in words, without Go's names", name, got)
		}
	}
}
