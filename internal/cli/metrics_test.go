package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/grit-run/grit/internal/poll"
)

// TestWorkerServesMetrics runs a real grit worker with --metrics on a
// run of process tasks that succeed, fail and are dead-lettered, and
// checks what /metrics says against what the store recorded.
func TestWorkerServesMetrics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "grit.db")
	file := writeFile(t, `name: observed
tasks:
  ok:
    run: "true"
  fails:
    retry: "1 10ms"
    run: "exit $GRIT_ATTEMPT" # failing otherwise each time: no poison
  poison:
    retry: "5 10ms"
    run: "echo 'config key missing' >&2; exit 1"
`)
	code, out, errOut := grit(t, "submit", "--json", "--store", dsn, file)
	var sub struct{ Run int64 }
	if err := json.Unmarshal([]byte(out), &sub); code != 0 || err != nil {
		t.Fatalf("submit: exit %d, %q %q", code, out, errOut)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	url, done := startWorker(t, ctx, "--store", dsn, "--concurrency", "4", "--metrics", "127.0.0.1:0")
	if code, out, errOut := grit(t, "wait", "--json", "--store", dsn, itoa(sub.Run)); code == exitUsage {
		t.Fatalf("wait: %s %s", out, errOut)
	}

	// What the store recorded, which the metrics must agree with.
	st := openStore(t, dsn)
	want := map[string]float64{}
	for _, tk := range runTasks(t, st) {
		want[fmt.Sprintf(`grit_tasks{queue="default",state=%q}`, tk.State)]++
		as, err := st.Attempts(t.Context(), tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			class := a.Class
			if class == "" {
				class = "none"
			}
			want[fmt.Sprintf(`grit_attempts_total{class=%q,kind="exec",outcome=%q,queue="default"}`, class, a.Outcome)]++
		}
	}
	want[`grit_dead_letters_total{kind="exec",queue="default"}`] = 1
	want[`grit_worker_slots_used`] = 0
	want[`grit_worker_slots_free`] = 4
	want[`grit_store_up`] = 1
	if want[`grit_tasks{queue="default",state="DEAD_LETTER"}`] != 1 || want[`grit_tasks{queue="default",state="FAILED"}`] != 1 ||
		want[`grit_attempts_total{class="none",kind="exec",outcome="SUCCESS",queue="default"}`] != 1 ||
		want[`grit_attempts_total{class="unclassified",kind="exec",outcome="ERROR",queue="default"}`] < 3 {
		t.Fatalf("the store recorded other attempts than the run's: %v", want)
	}

	// The worker counts an attempt once the store has taken it, just
	// after grit wait can see it: scrape until the counts are there (the
	// store's gauges are read afresh, for no scrape came before).
	var got map[string]float64
	poll.Wait(20*time.Second, func() bool { got = scrape(t, url); return contains(got, want) })
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	failures := want[`grit_attempts_total{class="unclassified",kind="exec",outcome="ERROR",queue="default"}`]
	if h := got[`grit_attempt_duration_seconds_count{kind="exec",outcome="ERROR",queue="default"}`]; h != failures {
		t.Errorf("attempt durations observed for %v of %v failures", h, failures)
	}
	if n := got[`grit_attempt_start_latency_seconds_count{kind="exec",queue="default"}`]; n < 3 {
		t.Errorf("start latency observed %v times, want at least the 3 first attempts", n)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("worker: exit %d", code)
	}
}

// startWorker runs grit worker in-process with --log-format json and
// returns the URL of its /metrics, read from its log, and its exit code
// once ctx ends.
func startWorker(t *testing.T, ctx context.Context, args ...string) (string, <-chan int) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"worker", "--log-format", "json"}, args...), io.Discard, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		var line struct{ Msg, URL string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving metrics" {
			go io.Copy(io.Discard, pr)
			return line.URL, done
		}
	}
	t.Fatal("the worker never said where it serves its metrics")
	return "", nil
}

// scrape reads a /metrics page into its samples, each named as
// name{label="value",…} with the labels sorted.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("%s is not Prometheus text: %v", url, err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				out[strings.Replace(key, name, name+"_count", 1)] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func contains(got, want map[string]float64) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// TestServerServesMetricsBesideTheDashboard: grit server serves /metrics
// on its dashboard's address, counting what comes through its API (a
// task enqueued) and reading the store's gauges.
func TestServerServesMetricsBesideTheDashboard(t *testing.T) {
	t.Parallel()
	cmd, out := gritProcess(t, t.TempDir(), "server", "--store", tempStore(t), "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	addr := waitServing(t, out)
	dash := waitSaid(t, out, `dashboard on (http://\S+)`, "grit server did not say where its dashboard is")
	if code, _, errOut := grit(t, "enqueue", "--server", addr, "--kind", "email.send", "--queue", "mail"); code != 0 {
		t.Fatalf("enqueue: exit %d: %s", code, errOut)
	}
	got := scrape(t, dash+"/metrics")
	for k, v := range map[string]float64{
		`grit_tasks_enqueued_total{kind="email.send",queue="mail"}`: 1,
		`grit_tasks{queue="mail",state="READY"}`:                    1,
		`grit_store_up`:                                             1,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// TestDashboardOffLoopbackNeedsTokens: the dashboard on a non-loopback
// address without tokens is refused, in the dashboard's words and with
// its port, by grit dashboard and grit server --http alike.
func TestDashboardOffLoopbackNeedsTokens(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	for _, args := range [][]string{
		{"dashboard", "--http", "0.0.0.0:7421", "--store", st},
		{"server", "--http", "0.0.0.0:7421", "--listen", "127.0.0.1:0", "--store", st},
	} {
		code, _, errOut := grit(t, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, errOut)
		}
		for _, want := range []string{"--http 0.0.0.0:7421", "dashboard", "127.0.0.1:7421", "GRIT_TOKENS"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%v: the refusal does not say %q: %s", args, want, errOut)
			}
		}
		if strings.Contains(errOut, "7420") || strings.Contains(errOut, "enqueue") {
			t.Errorf("%v: the refusal speaks of the API: %s", args, errOut)
		}
	}
}

// TestUnsetNumberKnobsSayNoExample: a number knob without a default of its
// own (the server's limits) refuses a bad value without an example that
// belongs to another knob.
func TestUnsetNumberKnobsSayNoExample(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--max-in-flight", "--max-message"} {
		code, _, errOut := grit(t, "server", flag, "x")
		if code != exitUsage || !strings.Contains(errOut, flag+`): want a positive number`) || strings.Contains(errOut, "such as") {
			t.Errorf("%s x: exit %d: %s", flag, code, errOut)
		}
	}
}
