package grit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/grit-run/grit"
	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/metrics"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// TestClientMetrics: a Go user who sets Config.Metrics and serves
// metrics.Handler sees the client's tasks enqueued, its attempts by
// outcome and class, and the dead letter its poison made.
func TestClientMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := grit.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "grit.db"), grit.Config{Concurrency: 2, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	err = grit.Handle(c, "charge", func(ctx context.Context, a charge) error {
		switch a.Order {
		case "bad":
			return retry.Permanent(errors.New("card declined"))
		case "poison":
			return errors.New("nil pointer in the ledger")
		}
		return nil
	}, grit.HandlerConfig{Policy: "5 1ms"})
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, c)
	want := map[string]task.State{"ok": task.Success, "bad": task.Failed, "poison": task.DeadLetter}
	for order, state := range want {
		e, err := c.Enqueue(context.Background(), "charge", charge{Order: order})
		if err != nil {
			t.Fatal(err)
		}
		waitTask(t, c, e.Task.ID, state)
	}
	srv := httptest.NewServer(metrics.Handler(reg))
	defer srv.Close()
	lines := []string{
		`grit_tasks_enqueued_total{kind="charge",queue="default"} 3`,
		`grit_attempts_total{class="none",kind="charge",outcome="SUCCESS",queue="default"} 1`,
		`grit_attempts_total{class="permanent",kind="charge",outcome="ERROR",queue="default"} 1`,
		`grit_attempts_total{class="unclassified",kind="charge",outcome="ERROR",queue="default"} 2`,
		`grit_dead_letters_total{kind="charge",queue="default"} 1`,
		`grit_tasks{queue="default",state="DEAD_LETTER"} 1`,
		`grit_worker_slots_free 2`,
	}
	// An attempt is counted just after the store shows its task's new
	// state: read until every line is there, for at most ten seconds.
	var page string
	poll.UntilSays(t, 10*time.Second, func() string { return fmt.Sprintf("/metrics lacks %s:\n%s", missing(page, lines), page) }, func() bool {
		page = get(t, srv.URL)
		return missing(page, lines) == ""
	})
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func missing(page string, lines []string) string {
	for _, l := range lines {
		if !strings.Contains(page, l+"\n") {
			return l
		}
	}
	return ""
}
