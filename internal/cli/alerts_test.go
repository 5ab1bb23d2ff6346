package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunAlertsTheWebhook: grit run with --alert-webhook, or with
// GRIT_ALERT_WEBHOOK, POSTs one alert for the task its run dead-letters,
// through the command's real path, before it exits.
func TestRunAlertsTheWebhook(t *testing.T) {
	for _, how := range []string{"flag", "env"} {
		t.Run(how, func(t *testing.T) {
			posts := make(chan map[string]any, 10)
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				var m map[string]any
				b, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(b, &m); err != nil {
					t.Errorf("the webhook got %q: %v", b, err)
				}
				posts <- m
			}))
			defer srv.Close()
			args := []string{"run", "--store", tempStore(t), "--json"}
			if how == "flag" {
				args = append(args, "--alert-webhook", srv.URL+"/grit")
			} else {
				t.Setenv("GRIT_ALERT_WEBHOOK", srv.URL+"/grit")
			}
			code, out, errOut := grit(t, append(args, example("poison.yaml"))...)
			if code != 1 {
				t.Fatalf("grit run poison.yaml: exit %d, want 1: %s %s", code, out, errOut)
			}
			var m map[string]any
			select {
			case m = <-posts:
			case <-time.After(10 * time.Second):
				t.Fatalf("no POST to the webhook; grit run said %s %s", out, errOut)
			}
			if got := n.Load(); got != 1 {
				t.Errorf("%d POSTs, want 1", got)
			}
			if m["type"] != "dead_letter" || m["kind"] != "exec" || m["run_id"] == nil || m["attempt"] != 2.0 ||
				!strings.Contains(m["error"].(string), "ZeroDivisionError") || !strings.HasPrefix(m["link"].(string), "grit task ") {
				t.Errorf("alert %v", m)
			}
		})
	}
}
