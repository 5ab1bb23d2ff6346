package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/retry/httpretry"
)

// The webhook's delivery: each POST is bounded by WebhookTimeout; a failed
// one is retried (a network failure, a 5xx, a 408 or a 429, as httpretry
// classifies them) with exponential backoff from 1s up to 30s, full
// jitter, honouring Retry-After, until WebhookGiveUp after the first.
const (
	WebhookTimeout = 10 * time.Second
	WebhookGiveUp  = 2 * time.Minute
)

// webhook POSTs alerts to a URL.
type webhook struct {
	url    string
	shown  string // url, redacted for the logs
	client *http.Client
	policy retry.Policy
	giveUp time.Duration
	log    *slog.Logger
}

func newWebhook(u string, log *slog.Logger) *webhook {
	return &webhook{
		url: u, shown: Redact(u), log: log,
		client: &http.Client{Timeout: WebhookTimeout},
		policy: retry.Policy{Backoff: retry.Exponential{Min: time.Second, Max: 30 * time.Second}, PoisonAfter: -1},
		giveUp: WebhookGiveUp,
	}
}

// body is an alert as the webhook's JSON has it: every key always there,
// ids and times null when they do not apply.
type body struct {
	Type        Type       `json:"type"`
	Time        time.Time  `json:"time"`
	Summary     string     `json:"summary"`
	TaskID      *int64     `json:"task_id"`
	Kind        string     `json:"kind"`
	Queue       string     `json:"queue"`
	Group       string     `json:"group"`
	Tenant      string     `json:"tenant"`
	RunID       *int64     `json:"run_id"`
	Attempt     int        `json:"attempt"`
	Fingerprint string     `json:"fingerprint"`
	Error       string     `json:"error"`
	Until       *time.Time `json:"until"`
	Tasks       int        `json:"tasks"`
	Schedule    string     `json:"schedule"`
	Link        string     `json:"link"`
}

// JSON is ev as the webhook POSTs it (see docs/alerts.md).
func JSON(ev Event) ([]byte, error) {
	b := body{
		Type: ev.Type, Time: ev.Time.UTC(), Summary: ev.Summary,
		Kind: ev.Kind, Queue: ev.Queue, Group: ev.Group, Tenant: ev.Tenant, Attempt: ev.Attempt,
		Fingerprint: ev.Fingerprint, Error: Bounded(ev.Error), Tasks: ev.Tasks, Schedule: ev.Schedule, Link: ev.Link,
	}
	if ev.TaskID != 0 {
		b.TaskID = &ev.TaskID
	}
	if ev.RunID != 0 {
		b.RunID = &ev.RunID
	}
	if !ev.Until.IsZero() {
		u := ev.Until.UTC()
		b.Until = &u
	}
	return json.Marshal(b)
}

// deliver POSTs ev, retrying as the package says, and logs the outcome
// when it is not delivered.
func (w *webhook) deliver(ctx context.Context, ev Event) {
	payload, err := JSON(ev)
	if err != nil {
		w.log.Error("alert not sent: it does not encode", "alert", ev.Type, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, w.giveUp)
	defer cancel()
	posts := 0
	var last error // the last answer's, which an end of ctx would hide
	_, err = retry.Do(ctx, func(ctx context.Context) (struct{}, error) {
		posts++
		err := w.post(ctx, payload)
		if err != nil && ctx.Err() == nil {
			last = err
		}
		return struct{}{}, err
	}, retry.WithPolicy(w.policy))
	if err == nil {
		return
	}
	if last == nil {
		last = err
	}
	why := "giving up"
	switch re := (*retry.Error)(nil); {
	case errors.Is(ctx.Err(), context.Canceled):
		why = "giving up: the alerts are stopping"
	case ctx.Err() != nil, errors.As(err, &re) && re.Reason == retry.ReasonBudget:
		why = "giving up: out of time"
	}
	w.log.Error("alert not delivered to the webhook; "+why, "webhook", w.shown, "alert", ev.Type, "task", ev.TaskID, "group", ev.Group,
		"posts", posts, "err", describe(last))
}

// post makes one POST of payload, its outcome marked as httpretry
// classifies it: a 4xx but 408 and 429 is permanent.
func (w *webhook) post(ctx context.Context, payload []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(payload))
	if err != nil {
		return retry.Permanent(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if resp != nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
		resp.Body.Close()
	}
	return httpretry.Classify(resp, err, time.Now())
}

// describe is err without the webhook's URL, which may carry a secret:
// the status of a response, or the cause of a failed request.
func describe(err error) string {
	var st *httpretry.StatusError
	if errors.As(err, &st) {
		return st.Status
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
