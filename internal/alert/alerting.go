package alert

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Alerting is where a claimer's alerts go: the one set of settings that
// the engine (for Go workers), the API server (for remote workers) and
// grit.Config embed, checked here alone. The zero value sends none.
type Alerting struct {
	// OnAlert, if set, is called with each alert, one at a time, on a
	// goroutine of its own: a slow callback delays the alerts after it,
	// never the claimer. Alerts wait for it in a bounded queue
	// (QueueSize); past it the oldest waiting is dropped, and the drops
	// logged.
	OnAlert func(Event)
	// AlertWebhook, if set, is an http or https URL each alert is POSTed
	// to as JSON (see docs/alerts.md), retried with jittered backoff on a
	// network failure, a 5xx, a 408 or a 429 for up to WebhookGiveUp; any
	// other 4xx is not retried. The alerts wait in a queue of their own,
	// as for OnAlert.
	AlertWebhook string
	// DashboardURL, if set, is the base URL of grit's dashboard (grit
	// server --http, grit dashboard): an alert's Link is its page (the
	// task's /tasks/ID, the group's row of /groups, the kind's tasks at
	// /tasks?kind=NAME) rather than a grit command.
	DashboardURL string
}

// Validate reports settings that cannot work, saying which and why.
func (a Alerting) Validate() error {
	var errs []error
	if err := checkURL(a.AlertWebhook); err != nil {
		errs = append(errs, fmt.Errorf("alert webhook %s: %w", Redact(a.AlertWebhook), err))
	}
	if err := checkURL(a.DashboardURL); err != nil {
		errs = append(errs, fmt.Errorf("dashboard URL %s: %w", Redact(a.DashboardURL), err))
	}
	return errors.Join(errs...)
}

// On reports whether a sends alerts anywhere.
func (a Alerting) On() bool { return a.OnAlert != nil || a.AlertWebhook != "" }

func checkURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want an http or https URL, such as https://alerts.example/grit")
	}
	return nil
}

// Redact is a URL fit to print: its user information, the values of its
// query and the parts of its path that look like keys (8 characters or
// more, with letters and digits: a chat webhook's secret is in its path)
// are masked. What does not parse as a URL is masked whole.
func Redact(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "xxxxx"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		u.RawQuery = q.Encode()
	}
	parts := strings.Split(u.Path, "/")
	for i, p := range parts {
		if keyLike.MatchString(p) && strings.ContainsAny(p, "0123456789") && strings.IndexFunc(p, isLetter) >= 0 {
			parts[i] = "xxxxx"
		}
	}
	u.Path, u.RawPath = strings.Join(parts, "/"), ""
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

var keyLike = regexp.MustCompile(`^[A-Za-z0-9_\-]{8,}$`)

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
