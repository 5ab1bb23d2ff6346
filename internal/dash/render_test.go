package dash

import (
	"testing"
	"time"
)

func TestIntervalAndZone(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		30 * time.Second: "30s", 5 * time.Minute: "5m", time.Hour: "1h", 90 * time.Minute: "1h30m",
		24 * time.Hour: "24h", 10*time.Minute + 30*time.Second: "10m30s", 20 * time.Second: "20s",
	} {
		if got := interval(d); got != want {
			t.Errorf("interval(%v) = %q, want %q", d, got, want)
		}
	}
	at := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	for zone, want := range map[string]string{
		"Europe/Paris": "Thu 26 Nov 02:00 CET", "UTC": "Thu 26 Nov 01:00 UTC", "Nowhere/Else": "Thu 26 Nov 01:00 UTC",
	} {
		if got := inZone(at, zone); got != want {
			t.Errorf("inZone(%v, %s) = %q, want %q", at, zone, got, want)
		}
	}
	if got := inZone(at.Add(10*time.Second), "UTC"); got != "Thu 26 Nov 01:00:10 UTC" {
		t.Errorf("a slot off the minute reads %q, want its seconds", got)
	}
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", 880000: "880,000", 1234567: "1,234,567", -4200: "-4,200",
	} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if got := numAny(int64(1_000_000)); got != "1,000,000" {
		t.Errorf("numAny(int64 1e6) = %q", got)
	}
	if got, want := count(1, "task"), "1 task"; got != want {
		t.Errorf("count(1) = %q, want %q", got, want)
	}
	if got, want := count(2500, "task"), "2,500 tasks"; got != want {
		t.Errorf("count(2500) = %q, want %q", got, want)
	}
}
