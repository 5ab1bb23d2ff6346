package task

import (
	"testing"
	"time"
)

func TestWorkerAlive(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	const lease = 15 * time.Second
	for _, tt := range []struct {
		name string
		w    Worker
		want bool
	}{
		{"heard from now", Worker{Active: true, LastSeen: now}, true},
		{"heard from a lease ago", Worker{Active: true, LastSeen: now.Add(-lease)}, true},
		{"silent past its lease", Worker{Active: true, LastSeen: now.Add(-lease - time.Millisecond)}, false},
		{"stopped", Worker{Active: false, LastSeen: now}, false},
	} {
		if got := tt.w.Alive(now, lease); got != tt.want {
			t.Errorf("%s: Alive = %v, want %v", tt.name, got, tt.want)
		}
	}
}
