package httpretry

import (
	"net/http"
	"testing"
	"time"
)

var now = time.Date(2025, 10, 21, 7, 28, 0, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"0", 0, true},
		{"2", 2 * time.Second, true},
		{"120", 2 * time.Minute, true},
		{"  120\t", 2 * time.Minute, true},
		{"007", 7 * time.Second, true},
		{"9223372036", 9223372036 * time.Second, true},
		{"9223372037", 0, false},                 // overflows a Duration
		{"99999999999999999999999999", 0, false}, // overflows int64
		{"", 0, false},
		{"   ", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"1.5", 0, false},
		{"1s", 0, false},
		{"1 2", 0, false},
		{"0x10", 0, false},
		{"1_000", 0, false},
		{"١٢", 0, false}, // Arabic-Indic digits
		{"\n5", 0, false},
		{"soon", 0, false},
		{"Tue, 21 Oct 2025 07:29:30 GMT", 90 * time.Second, true},   // IMF-fixdate
		{" Tue, 21 Oct 2025 07:29:30 GMT ", 90 * time.Second, true}, // with spaces
		{"Tuesday, 21-Oct-25 07:29:30 GMT", 90 * time.Second, true}, // RFC 850
		{"Tue Oct 21 07:29:30 2025", 90 * time.Second, true},        // ANSI C asctime
		{"Tue, 21 Oct 2025 07:00:00 GMT", 0, true},                  // already past
		{"Tue, 21 Oct 2025 07:29:30 PST", 0, false},
		{"Tue, 21 Oct 2025 07:29:30", 0, false},
		{"Tue, 21 Oct 2025 07:29:30 GMT junk", 0, false},
		{"2025-10-21T07:29:30Z", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, ok := ParseRetryAfter(tt.in, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseRetryAfterZeroNow(t *testing.T) {
	t.Parallel()
	date := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	got, ok := ParseRetryAfter(date, time.Time{})
	if !ok || got <= 58*time.Minute || got > time.Hour {
		t.Errorf("ParseRetryAfter(%q, zero) = %v, %v; want about an hour from the clock", date, got, ok)
	}
}
