package server

import (
	"testing"
	"time"

	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestQuarantineTallies: an attempt's items alert once, when its result
// comes, counting only what it added; one that set nothing new aside
// does not alert; one that never reports alerts once it is older than
// four leases, at the next sweep.
func TestQuarantineTallies(t *testing.T) {
	t.Parallel()
	var q quarTallies
	var sent []alert.Event
	send := func(ev alert.Event) { sent = append(sent, ev) }
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := task.Task{ID: 1, Kind: "import", LeaseToken: 10}
	b := task.Task{ID: 2, Kind: "import", LeaseToken: 20}
	items := []task.Quarantined{{Error: "bad date", Fingerprint: "fp1"}}
	q.recorded(a, items, 2, time.Second, at, send)
	q.recorded(a, []task.Quarantined{{Error: "no account", Fingerprint: "fp2"}}, 3, time.Second, at, send)
	q.recorded(b, items, 1, time.Second, at, send)
	if len(sent) != 0 {
		t.Fatalf("alerts before any result: %+v", sent)
	}
	q.end(10, at, send)
	q.end(10, at, send) // a repeated report
	if len(sent) != 1 || sent[0].TaskID != 1 || sent[0].Tasks != 3 || sent[0].Fingerprint != "fp1" || sent[0].Error != "bad date" {
		t.Fatalf("alerts %+v, want one for task 1's 3 items, with its first item's error", sent)
	}
	q.end(99, at, send) // an attempt that set nothing aside
	if len(sent) != 1 {
		t.Errorf("an attempt without items alerted: %+v", sent[1:])
	}
	later := at.Add(2 * time.Minute)                                               // past four leases, and a minute after the last sweep
	q.recorded(task.Task{ID: 3, LeaseToken: 30}, nil, 0, time.Second, later, send) // sweeps task 2's, never reported
	if len(sent) != 2 || sent[1].TaskID != 2 || sent[1].Tasks != 1 {
		t.Fatalf("alerts %+v, want task 2's swept", sent)
	}
	q.end(20, later, send)
	q.end(30, later, send)
	if len(sent) != 2 {
		t.Errorf("alerts after the sweep: %+v", sent[2:])
	}

	// A heartbeat keeps a long attempt's tally; one that finds its lease
	// lost ends it.
	long, gone := task.Task{ID: 4, LeaseToken: 40}, task.Task{ID: 5, LeaseToken: 50}
	q.recorded(long, items, 1, time.Minute, later, send)
	q.recorded(gone, items, 1, time.Minute, later, send)
	for i := range 5 {
		q.heartbeat([]store.Lease{{TaskID: 4, Token: 40}}, nil, later.Add(time.Duration(i)*time.Minute), send)
	}
	q.recorded(task.Task{ID: 6, LeaseToken: 60}, nil, 0, time.Second, later.Add(5*time.Minute), send) // sweeps
	if len(sent) != 3 || sent[2].TaskID != 5 {
		t.Fatalf("alerts %+v, want the silent task 5's alone", sent[2:])
	}
	q.heartbeat(nil, []store.Lease{{TaskID: 4, Token: 40}}, later.Add(6*time.Minute), send)
	if len(sent) != 4 || sent[3].TaskID != 4 {
		t.Errorf("alerts %+v, want task 4's, its lease lost", sent[3:])
	}
}
