package schedule

import (
	"errors"
	"testing"
	"time"
)

// FuzzTiming reads any cron expression, zone and interval: an error
// matching ErrInvalid, or slots that only go forward.
func FuzzTiming(f *testing.F) {
	for _, c := range []string{"0 2 * * *", "*/15 * * * 1-5", "@hourly", "@daily", "0 0 29 2 *", "5,10-20/3 1-23/2 1,15 jan-jun mon-fri", "* * * *", "@every 1m", "TZ=UTC * * * * *"} {
		for _, z := range []string{"", "UTC", "America/New_York", "Australia/Lord_Howe", "Europe/Paris"} {
			f.Add(c, z, int64(0), int64(1_700_000_000))
		}
	}
	f.Add("", "", int64(time.Second), int64(0))
	f.Add("", "", int64(7*time.Minute), int64(-5))
	f.Fuzz(func(t *testing.T, cron, zone string, every, unix int64) {
		s := Schedule{Name: "f", Cron: cron, Zone: zone, Every: time.Duration(every)}
		tm, err := s.Timing()
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q %q %d: an error not matching ErrInvalid: %v", cron, zone, every, err)
			}
			return
		}
		at := time.Unix(unix%(1<<34), 0)
		for range 5 {
			next := tm.Next(at)
			if next.IsZero() {
				return // a cron whose next slot is years away
			}
			if !next.After(at) {
				t.Fatalf("%q in %q: next after %v is %v", cron, zone, at, next)
			}
			at = next
		}
	})
}
