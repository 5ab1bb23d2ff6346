package gate

import (
	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/task"
)

// The gate raises the alerts because it is where every claimer's results
// meet once the store has taken them: the engine's and the API server's
// (Ended) and the rescue's (Rescue). A decision the store did not take
// raises none.

func (g *Gate) alert(ev alert.Event) {
	if g.cfg.Alert != nil {
		g.cfg.Alert(ev)
	}
}

// alertDeadLetters raises an alert for each end that the store recorded
// as DEAD_LETTER.
func (g *Gate) alertDeadLetters(ends []End) {
	if g.cfg.Alert == nil {
		return
	}
	for _, e := range ends {
		if e.Err != nil || e.Finish.State != task.DeadLetter {
			continue
		}
		t := *e.Task
		t.State = task.DeadLetter
		g.alert(alert.DeadLettered(t, e.Finish.Error, e.Finish.Fingerprint, g.StoreNow()))
	}
}

// Outage is a kind or group held as an outage (see HeldOutage).
type Outage = alert.Outage

// HeldOutage is how the outage detector tells the operators that it
// holds a kind or group: the same failure (by fingerprint) on many
// distinct tasks of it, none succeeding, which it holds as an open
// breaker holds its group rather than dead-letter each task. The
// detector calls it once per hold, after the store has recorded the
// hold, whichever claimer's results tipped it; it raises an
// alert.OutageHeld alert and returns at once.
func (g *Gate) HeldOutage(o Outage) {
	g.cfg.Logger.Warn("outage held: many tasks failed alike and none succeeded, so their kind or group waits for a probe instead of dead-lettering each",
		"kind", o.Kind, "group", o.Group, "tasks", o.Tasks, "fingerprint", o.Fingerprint, "err", alert.Bounded(o.Error), "until", o.Until)
	g.alert(alert.OutageEvent(o, g.StoreNow()))
}
