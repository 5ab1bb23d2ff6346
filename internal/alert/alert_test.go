package alert

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// logLines collects what a logger writes, a line a record, and signals
// each new one.
type logLines struct {
	mu    sync.Mutex
	lines []string
	added chan struct{}
}

func newLog() (*logLines, *slog.Logger) {
	l := &logLines{added: make(chan struct{}, 1)}
	return l, slog.New(slog.NewTextHandler(l, nil))
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, string(p))
	l.mu.Unlock()
	select {
	case l.added <- struct{}{}:
	default:
	}
	return len(p), nil
}

// wait returns the first line with every one of subs, failing the test
// if none comes within 10s.
func (l *logLines) wait(t *testing.T, subs ...string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			ok := true
			for _, s := range subs {
				ok = ok && strings.Contains(line, s)
			}
			if ok {
				l.mu.Unlock()
				return line
			}
		}
		all := strings.Join(l.lines, "")
		l.mu.Unlock()
		select {
		case <-l.added:
		case <-deadline:
			t.Fatalf("no log line with %q; the log:\n%s", subs, all)
		}
	}
}

// receiver is a webhook's server: it answers each POST with the next of
// codes (then 200), and hands every body it reads to posts.
type receiver struct {
	*httptest.Server
	posts chan map[string]any
	mu    sync.Mutex
	codes []int
	n     int
}

func newReceiver(t *testing.T, codes ...int) *receiver {
	r := &receiver{posts: make(chan map[string]any, 2*QueueSize), codes: codes}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var m map[string]any
		b, _ := io.ReadAll(req.Body)
		if err := json.Unmarshal(b, &m); err != nil || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("the webhook got %s %q (%s): %v", req.Method, b, req.Header.Get("Content-Type"), err)
		}
		r.mu.Lock()
		code := http.StatusOK
		if r.n < len(r.codes) {
			code = r.codes[r.n]
		}
		r.n++
		r.mu.Unlock()
		r.posts <- m
		w.WriteHeader(code)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func (r *receiver) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m := <-r.posts:
		return m
	case <-time.After(10 * time.Second):
		t.Fatalf("no POST after %d", r.count())
		return nil
	}
}

// quick makes a webhook's retries quick, for a test.
func quick(w *webhook) {
	w.policy.Backoff = retry.Exponential{Min: time.Millisecond, Max: 5 * time.Millisecond}
}

func stop(t *testing.T, a *Alerter) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.Stop(ctx)
}

var deadTask = task.Task{ID: 42, Kind: "charge", Queue: "billing", Group: "payments", Tenant: "acme", RunID: 7, Attempt: 2}

// TestWebhookRetriesUntilDelivered: a receiver that answers 503 twice
// gets the alert on the third POST, and no more.
func TestWebhookRetriesUntilDelivered(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, http.StatusServiceUnavailable, http.StatusServiceUnavailable)
	logs, log := newLog()
	a := newAlerter(Alerting{AlertWebhook: r.URL}, log, nil, quick)
	a.Send(DeadLettered(deadTask, "charge: card declined", "fp1", time.Now()))
	for range 3 {
		if m := r.next(t); m["task_id"] != 42.0 {
			t.Errorf("POST %v", m)
		}
	}
	stop(t, a)
	if n := r.count(); n != 3 {
		t.Errorf("%d POSTs, want 3: two 503s and the 200", n)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if len(logs.lines) > 0 {
		t.Errorf("a delivered alert logged %q", logs.lines)
	}
}

// TestWebhookClientErrorIsNotRetried: a 400 is the receiver refusing the
// alert: one POST, and the failure logged without the URL's secret.
func TestWebhookClientErrorIsNotRetried(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, http.StatusBadRequest, http.StatusBadRequest)
	logs, log := newLog()
	a := newAlerter(Alerting{AlertWebhook: r.URL + "/hooks/T0123456789abcdef?token=s3cret"}, log, nil, quick)
	a.Send(DeadLettered(deadTask, "boom", "fp", time.Now()))
	line := logs.wait(t, "alert not delivered", "400 Bad Request", "posts=1")
	stop(t, a)
	if n := r.count(); n != 1 {
		t.Errorf("%d POSTs for a 400, want 1", n)
	}
	if strings.Contains(line, "s3cret") || strings.Contains(line, "T0123456789abcdef") {
		t.Errorf("the log shows the webhook's secret: %s", line)
	}
}

// TestWebhookRetriesOn408And429: 408 and 429 are 4xx that mean "again".
func TestWebhookRetriesOn408And429(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, http.StatusRequestTimeout, http.StatusTooManyRequests)
	a := newAlerter(Alerting{AlertWebhook: r.URL}, nil, nil, quick)
	a.Send(Opened("payments", time.Now(), time.Now().Add(time.Minute)))
	for range 3 {
		r.next(t)
	}
	stop(t, a)
	if n := r.count(); n != 3 {
		t.Errorf("%d POSTs, want 3", n)
	}
}

// TestWebhookGivesUp: a receiver down for good is given up on after the
// webhook's bound, and that is logged.
func TestWebhookGivesUp(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, slicesRepeat(http.StatusBadGateway, 1000)...)
	logs, log := newLog()
	a := newAlerter(Alerting{AlertWebhook: r.URL}, log, nil, func(w *webhook) { quick(w); w.giveUp = time.Second })
	a.Send(Opened("payments", time.Now(), time.Now()))
	logs.wait(t, "alert not delivered", "giving up: out of time", "502 Bad Gateway")
	stop(t, a)
	if n := r.count(); n < 2 {
		t.Errorf("%d POSTs before giving up, want retries", n)
	}
}

func slicesRepeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestHungWebhookDropsTheOldest: while the receiver hangs, Send returns
// at once; past QueueSize the oldest waiting alerts are dropped, and the
// count logged when delivery resumes; Stop gives up at its deadline.
func TestHungWebhookDropsTheOldest(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	got := make(chan string, 2*QueueSize)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var m map[string]any
		json.NewDecoder(req.Body).Decode(&m)
		got <- fmt.Sprint(m["summary"])
		<-release
	}))
	defer srv.Close()
	defer close(release) // before Close, which waits for the handlers
	logs, log := newLog()
	var mu sync.Mutex
	dropped := 0
	a := newAlerter(Alerting{AlertWebhook: srv.URL}, log, func(n int) { mu.Lock(); dropped += n; mu.Unlock() }, quick)
	send := func(i int) {
		ev := Opened("g", time.Now(), time.Now())
		ev.Summary = fmt.Sprint(i)
		a.Send(ev)
	}
	// The receiver holds the first WebhookParallel alerts, one a delivery.
	held := map[string]bool{}
	for i := range WebhookParallel {
		send(i)
		held[<-got] = true
	}
	if len(held) != WebhookParallel {
		t.Fatalf("held %v", held)
	}
	// The next QueueSize+3 wait, and the three oldest of them are dropped.
	next := WebhookParallel
	for i := range QueueSize + 3 {
		send(next + i)
	}
	release <- struct{}{}
	if s, want := <-got, fmt.Sprint(next+3); s != want {
		t.Errorf("POST after the drops: alert %s, want %s (the three oldest waiting dropped)", s, want)
	}
	logs.wait(t, "alerts dropped", "dropped=3")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	a.Stop(ctx) // the receiver holds what it has: the rest are dropped
	logs.wait(t, "alerts dropped at stop", fmt.Sprintf("waiting=%d", QueueSize-1))
	mu.Lock()
	if want := 3 + QueueSize - 1; dropped != want {
		t.Errorf("counted %d dropped, want %d", dropped, want)
	}
	mu.Unlock()
	a.Send(Opened("g", time.Now(), time.Now()))
	logs.wait(t, "alert dropped: the alerts have stopped")
}

// TestFailingAlertDelaysOnlyItself: while the receiver refuses one alert,
// and it is retried, an alert raised after it is delivered at once.
func TestFailingAlertDelaysOnlyItself(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	fixed := false
	got := make(chan string, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var m map[string]any
		json.NewDecoder(req.Body).Decode(&m)
		s := fmt.Sprint(m["summary"])
		mu.Lock()
		refuse := s == "breaker" && !fixed
		mu.Unlock()
		if refuse {
			w.WriteHeader(http.StatusInternalServerError)
			got <- "refused " + s
			return
		}
		got <- s
	}))
	defer srv.Close()
	a := newAlerter(Alerting{AlertWebhook: srv.URL}, nil, nil, func(w *webhook) {
		w.policy.Backoff = retry.Exponential{Min: 20 * time.Millisecond, Max: 50 * time.Millisecond}
	})
	defer stop(t, a)
	ev := Opened("g", time.Now(), time.Now())
	ev.Summary = "breaker"
	a.Send(ev)
	if s := <-got; s != "refused breaker" {
		t.Fatalf("first POST %q", s)
	}
	dl := DeadLettered(deadTask, "boom", "fp", time.Now())
	dl.Summary = "dead letter"
	a.Send(dl)
	for s := range got {
		if s == "dead letter" {
			break // delivered while the breaker's alert is still refused
		}
		if s != "refused breaker" {
			t.Fatalf("POST %q", s)
		}
	}
	mu.Lock()
	fixed = true
	mu.Unlock()
	for s := range got {
		if s == "breaker" {
			break
		}
	}
}

// TestFloodIsBatched: alerts like one still waiting fold into it, their
// count in Tasks, rather than fill the queue and be dropped.
func TestFloodIsBatched(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	got := make(chan map[string]any, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var m map[string]any
		json.NewDecoder(req.Body).Decode(&m)
		got <- m
		<-release
	}))
	defer srv.Close()
	defer close(release)
	dropped := 0
	a := newAlerter(Alerting{AlertWebhook: srv.URL}, nil, func(n int) { dropped += n }, quick)
	// Hold every delivery with unlike alerts, then flood.
	for i := range WebhookParallel {
		a.Send(Opened(fmt.Sprint("g", i), time.Now(), time.Now()))
		<-got
	}
	for i := range 3 * QueueSize {
		tk := deadTask
		tk.ID = int64(100 + i)
		a.Send(DeadLettered(tk, fmt.Sprintf("card %d declined", i), "fp-declined", time.Now()))
	}
	release <- struct{}{}
	m := <-got
	if m["type"] != string(DeadLetter) || m["tasks"] != float64(3*QueueSize) || m["task_id"] != float64(100) ||
		!strings.Contains(fmt.Sprint(m["summary"]), fmt.Sprintf("%d tasks are DEAD_LETTER (charge), failing alike, e.g. task 100", 3*QueueSize)) {
		t.Errorf("the flood's one alert %v", m)
	}
	if dropped != 0 {
		t.Errorf("%d dropped", dropped)
	}
}

// TestCallback: OnAlert gets each alert, with its link, one at a time, in
// order; a panic in it is logged, and the next alert still comes.
func TestCallback(t *testing.T) {
	t.Parallel()
	got := make(chan Event, 10)
	logs, log := newLog()
	a := New(Alerting{OnAlert: func(ev Event) {
		got <- ev
		if ev.Type == BreakerOpened {
			panic("receiver bug")
		}
	}}, log, nil)
	now := time.Now()
	a.Send(Opened("payments", now, now.Add(time.Minute)))
	a.Send(DeadLettered(deadTask, "boom", "fp", now))
	stop(t, a)
	if ev := <-got; ev.Type != BreakerOpened || ev.Group != "payments" || ev.Link != "grit breakers" {
		t.Errorf("first alert %+v", ev)
	}
	if ev := <-got; ev.Type != DeadLetter || ev.TaskID != 42 || ev.Link != "grit task 42" {
		t.Errorf("second alert %+v", ev)
	}
	logs.wait(t, "the alert callback panicked", "receiver bug")
}

func TestNoAlerting(t *testing.T) {
	t.Parallel()
	var a *Alerter = New(Alerting{DashboardURL: "https://dash.example"}, nil, nil)
	if a != nil {
		t.Fatalf("an alerter without a receiver: %+v", a)
	}
	a.Send(Opened("g", time.Now(), time.Now())) // a nil alerter sends nothing
	a.Stop(context.Background())
}

// TestJSON: the webhook's body has every key, nulls where they do not
// apply, times in UTC, the error bounded.
func TestJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.FixedZone("x", 3600))
	ev := DeadLettered(deadTask, strings.Repeat("é", MaxError), "b4fa8541b842", at)
	ev.Link = link(ev, "https://dash.example/")
	b, err := JSON(ev)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	errText := m["error"].(string)
	delete(m, "error")
	delete(m, "summary")
	want := map[string]any{"type": "dead_letter", "time": "2026-01-02T14:04:05Z", "task_id": 42.0, "kind": "charge", "queue": "billing",
		"group": "payments", "tenant": "acme", "run_id": 7.0, "attempt": 2.0, "fingerprint": "b4fa8541b842", "until": nil, "tasks": 0.0, "schedule": "",
		"link": "https://dash.example/tasks/42"}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("body %v\nwant %v", m, want)
	}
	if len(errText) > MaxError || !strings.HasSuffix(errText, "…") || !strings.HasPrefix(errText, "éé") || strings.ContainsRune(errText, '\uFFFD') {
		t.Errorf("error of %d bytes: %q…", len(errText), errText[:20])
	}
	b, _ = JSON(Opened("payments", at, at.Add(time.Minute)))
	if !strings.Contains(string(b), `"task_id":null`) || !strings.Contains(string(b), `"run_id":null`) || !strings.Contains(string(b), `"until":"2026-01-02T14:05:05Z"`) {
		t.Errorf("breaker body %s", b)
	}
}

func TestLink(t *testing.T) {
	t.Parallel()
	out := OutageEvent(Outage{Kind: "send mail", Tasks: 30, Error: "smtp: 421"}, time.Now())
	grp := OutageEvent(Outage{Group: "smtp", Tasks: 30}, time.Now())
	for _, c := range []struct {
		ev        Event
		dashboard string
		want      string
	}{
		{DeadLettered(deadTask, "", "", time.Now()), "", "grit task 42"},
		{DeadLettered(deadTask, "", "", time.Now()), "https://dash.example/grit/", "https://dash.example/grit/tasks/42"},
		{Opened("a b", time.Now(), time.Now()), "", "grit breakers"},
		{Opened("a b", time.Now(), time.Now()), "https://d.example", "https://d.example/groups#g-a%20b"},
		{out, "", "grit tasks --kind send mail"},
		{out, "https://d.example", "https://d.example/tasks?kind=send+mail"},
		{grp, "https://d.example", "https://d.example/groups#g-smtp"},
	} {
		if got := link(c.ev, c.dashboard); got != c.want {
			t.Errorf("%s with %q: link %q, want %q", c.ev.Summary, c.dashboard, got, c.want)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://alerts.example/grit":                                           "https://alerts.example/grit",
		"https://user:pw@alerts.example/grit":                                   "https://xxxxx@alerts.example/grit",
		"https://alerts.example/grit?token=abc&channel=ops":                     "https://alerts.example/grit?channel=xxxxx&token=xxxxx",
		"https://hooks.slack.com/services/T0000AAAA/B0000BBBB/XXXXxxxx1234YYYY": "https://hooks.slack.com/services/xxxxx/xxxxx/xxxxx",
		"http://127.0.0.1:9000/hook":                                            "http://127.0.0.1:9000/hook",
		"not a url":                                                             "xxxxx",
		"":                                                                      "",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := (Alerting{AlertWebhook: "https://a.example/x", DashboardURL: "http://d.example"}).Validate(); err != nil {
		t.Errorf("good URLs: %v", err)
	}
	for _, bad := range []Alerting{{AlertWebhook: "alerts.example/x"}, {AlertWebhook: "ftp://a.example"}, {AlertWebhook: "https://"}, {DashboardURL: "::"}} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "want an http or https URL") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	err := Alerting{AlertWebhook: "ftp://u:s3cret@a.example"}.Validate()
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %v: want one without the password", err)
	}
}

// TestStopDeliversWhatWaits: Stop returns once the alerts waiting are
// delivered (several at once: in any order).
func TestStopDeliversWhatWaits(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	a := New(Alerting{AlertWebhook: r.URL}, nil, nil)
	for i := range 5 {
		ev := Opened("g", time.Now(), time.Now())
		ev.Summary = fmt.Sprint(i)
		a.Send(ev)
	}
	stop(t, a)
	if n := r.count(); n != 5 {
		t.Fatalf("%d POSTs when Stop returned, want 5", n)
	}
	seen := map[string]bool{}
	for range 5 {
		seen[fmt.Sprint((<-r.posts)["summary"])] = true
	}
	for i := range 5 {
		if !seen[fmt.Sprint(i)] {
			t.Errorf("alert %d not POSTed: %v", i, seen)
		}
	}
}

// FuzzRedact: Redact never shows a URL's password or its query's values.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"https://u:p4ss@h.example/x?token=s3cret", "http://h/a/b?x=1&y=2", "https://h.example/services/T0123456789/B0123", "::", "https://[::1]:80/%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Redact(s)
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || u.Host == "" {
			if s != "" && got != "xxxxx" {
				t.Errorf("Redact(%q) = %q, want it masked whole", s, got)
			}
			return
		}
		if p, ok := u.User.Password(); ok && len(p) > 5 && strings.Contains(got, p) {
			t.Errorf("Redact(%q) = %q shows the password", s, got)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				if len(v) > 5 && !strings.Contains("xxxxx", v) && strings.Contains(got, "="+url.QueryEscape(v)) {
					t.Errorf("Redact(%q) = %q shows the query value %q", s, got, v)
				}
			}
		}
	})
}
