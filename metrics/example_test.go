package metrics_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/grit-run/grit/metrics"
	"github.com/grit-run/grit/task"
)

// A process that claims tasks counts their attempts into grit's metrics,
// and serves them at /metrics. (grit.Config{Metrics: m} does both for a
// client; grit worker --metrics for the command line.)
func ExampleHandler() {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	t := task.Task{Queue: "mail", Kind: "email.send"}
	m.Ended(&t, &task.Attempt{Outcome: task.OutcomeError, Class: "unclassified", StartedAt: start, EndedAt: start.Add(300 * time.Millisecond)}, task.DeadLetter)

	srv := httptest.NewServer(metrics.Handler(reg))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(line, "grit_attempts_total{") || strings.HasPrefix(line, "grit_dead_letters_total{") {
			fmt.Println(line)
		}
	}
	// Output:
	// grit_attempts_total{class="unclassified",kind="email.send",outcome="ERROR",queue="mail"} 1
	// grit_dead_letters_total{kind="email.send",queue="mail"} 1
}
