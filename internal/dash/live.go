package dash

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// stream is /live: server-sent events that say "change" whenever the
// store's signature changes, and a comment every 15s so that proxies keep
// the connection. The page's script reloads its main part on a change.
func (d *Dashboard) stream(w http.ResponseWriter, r *http.Request, _ who) error {
	fl, ok := w.(http.Flusher)
	if !ok {
		return errBadRequest{"live updates need a connection that can stream"}
	}
	ch, stop, ok := d.live.subscribe()
	if !ok {
		http.Error(w, "the dashboard is stopping", http.StatusServiceUnavailable)
		return nil
	}
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	fmt.Fprint(w, "retry: 3000\n\n")
	fl.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case _, open := <-ch:
			if !open {
				return nil
			}
			fmt.Fprint(w, "event: change\ndata: {}\n\n")
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		}
		fl.Flush()
	}
}

// signature sums up what the pages show, cheaply: the counts of tasks by
// queue and state, the groups' breakers and holds, and the newest audit
// entry. A change of any of them makes open pages reload.
func (d *Dashboard) signature(ctx context.Context) (string, error) {
	h := sha256.New()
	if d.counts != nil {
		counts, _, err := d.counts.get(ctx)
		if err != nil {
			return "", err
		}
		for _, c := range counts {
			fmt.Fprintf(h, "%s/%s/%d;", c.Queue, c.State, c.N)
		}
	}
	gs, err := d.read.Groups(ctx)
	if err != nil {
		return "", err
	}
	for _, name := range slices.Sorted(maps.Keys(gs)) { // in one order, or every look is a change
		g := gs[name]
		fmt.Fprintf(h, "%s/%s/%d/%v;", name, g.Circuit.State, g.Circuit.Opens, g.Outage != nil)
	}
	// The newest task, through the primary key: a new task shows at once,
	// whatever the age of the counts.
	newest, err := d.read.ListTasks(ctx, task.Filter{Newest: true, Limit: 1})
	if err != nil {
		return "", err
	}
	for _, t := range newest {
		fmt.Fprintf(h, "task/%d/%s;", t.ID, t.State)
	}
	if sc, ok := d.read.(store.Scheduler); ok {
		// Each schedule's version: a pause, a resume or a tick that
		// changed its state shows on the schedules page.
		rows, err := sc.Schedules(ctx, time.Time{})
		if err != nil {
			return "", err
		}
		for _, r := range rows {
			fmt.Fprintf(h, "schedule/%s/%d;", r.Name, r.Version)
		}
	}
	if a, ok := d.read.(store.Auditor); ok {
		es, err := a.AuditLog(ctx, 0, 1)
		if err != nil {
			return "", err
		}
		for _, e := range es {
			fmt.Fprintf(h, "audit/%d;", e.ID)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
