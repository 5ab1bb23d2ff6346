package ops

import (
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
)

func TestLagOf(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	primary := store.WALPosition{System: "7", LSN: 5 << 20, Now: now}
	tests := []struct {
		name    string
		replica store.WALPosition
		want    Lag
		says    string
	}{
		{"caught up", store.WALPosition{System: "7", Standby: true, LSN: 5 << 20, Replayed: now.Add(-time.Hour), Now: now},
			Lag{Standby: true, Replayed: now.Add(-time.Hour)}, "a replica, caught up with the store"},
		{"ahead of the primary's reading", store.WALPosition{System: "7", Standby: true, LSN: 6 << 20, Replayed: now, Now: now},
			Lag{Standby: true, Replayed: now}, "a replica, caught up with the store"},
		{"behind", store.WALPosition{System: "7", Standby: true, LSN: 3 << 20, Replayed: now.Add(-2500 * time.Millisecond), Now: now},
			Lag{Standby: true, Bytes: 2 << 20, Seconds: 2.5, Replayed: now.Add(-2500 * time.Millisecond)}, "a replica, 2.5s behind the store (2.0 MiB of log not yet replayed)"},
		{"nothing replayed", store.WALPosition{System: "7", Standby: true, LSN: 5<<20 - 100, Now: now},
			Lag{Standby: true, Bytes: 100, Seconds: -1}, "a replica, 100 B of log behind the store, no transaction replayed yet"},
		{"promoted", store.WALPosition{System: "7", LSN: 5 << 20, Replayed: now.Add(-time.Minute), Now: now},
			Lag{}, "not a replica: it takes writes, level with the store"},
	}
	for _, tt := range tests {
		got, err := lagOf(primary, tt.replica)
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
		if got.String() != tt.says {
			t.Errorf("%s: says %q, want %q", tt.name, got, tt.says)
		}
	}
	_, err := lagOf(primary, store.WALPosition{System: "8", Standby: true})
	if err == nil || !strings.Contains(err.Error(), "not a replica of the store: its database system is 8, the store's 7") {
		t.Errorf("a replica of another database: %v", err)
	}
}
