package storetest

import (
	"slices"
	"testing"

	"github.com/grit-run/grit/task"
)

func (h *harness) workers() []task.Worker {
	h.t.Helper()
	ws, err := h.s.Workers(h.ctx)
	if err != nil {
		h.t.Fatalf("workers: %v", err)
	}
	return ws
}

var workerTests = map[string]func(*testing.T, *harness){
	"RegisterAndList": func(t *testing.T, h *harness) {
		for _, id := range []string{"b", "a"} {
			if err := h.s.RegisterWorker(h.ctx, task.Worker{ID: id, Host: "host-" + id, PID: 42, Version: "v1", Kinds: []string{"send", "resize", "send"}}); err != nil {
				t.Fatal(err)
			}
		}
		ws := h.workers()
		if len(ws) != 2 {
			t.Fatalf("%d workers, want 2", len(ws))
		}
		for _, w := range ws {
			if w.Host != "host-"+w.ID || w.PID != 42 || w.Version != "v1" || !w.Active || w.StartedAt.IsZero() || w.LastSeen.IsZero() ||
				!slices.Equal(w.Kinds, []string{"resize", "send"}) {
				t.Errorf("worker %+v, want what was registered (its kinds sorted, once each), active, started and seen", w)
			}
		}
	},
	"RegisterAgainReplaces": func(t *testing.T, h *harness) {
		h.s.RegisterWorker(h.ctx, task.Worker{ID: "w", PID: 1})
		h.s.DeactivateWorker(h.ctx, "w")
		if err := h.s.RegisterWorker(h.ctx, task.Worker{ID: "w", PID: 2}); err != nil {
			t.Fatal(err)
		}
		if ws := h.workers(); len(ws) != 1 || ws[0].PID != 2 || !ws[0].Active || len(ws[0].Kinds) != 0 {
			t.Errorf("workers %+v, want w with pid 2, active, serving no kind", ws)
		}
	},
	"DeactivateMarksInactive": func(t *testing.T, h *harness) {
		h.s.RegisterWorker(h.ctx, task.Worker{ID: "w"})
		if err := h.s.DeactivateWorker(h.ctx, "w"); err != nil {
			t.Fatal(err)
		}
		if ws := h.workers(); len(ws) != 1 || ws[0].Active {
			t.Errorf("workers %+v, want w inactive", ws)
		}
	},
	"DeactivateUnknownIsNotFound": func(t *testing.T, h *harness) {
		wantErr(t, h.s.DeactivateWorker(h.ctx, "nope"), task.ErrNotFound)
	},
}
