package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/task"
)

func mustTiming(t *testing.T, s Schedule) Timing {
	t.Helper()
	tm, err := s.Timing()
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// slots lists the slots of tm in [from, to).
func slots(tm Timing, from, to time.Time) []time.Time {
	var out []time.Time
	for at := tm.Next(from.Add(-time.Nanosecond)); !at.IsZero() && at.Before(to); at = tm.Next(at) {
		out = append(out, at)
	}
	return out
}

func TestNextInUTC(t *testing.T) {
	t.Parallel()
	tm := mustTiming(t, Schedule{Name: "a", Cron: "*/15 9-10 * * 1-5"})
	from := time.Date(2026, 11, 27, 10, 40, 0, 0, time.UTC) // a Friday
	want := []string{"2026-11-27T10:45:00Z", "2026-11-30T09:00:00Z", "2026-11-30T09:15:00Z"}
	at := from
	for _, w := range want {
		at = tm.Next(at)
		if got := at.Format(time.RFC3339); got != w {
			t.Fatalf("next: %s, want %s", got, w)
		}
	}
}

func TestNextEvery(t *testing.T) {
	t.Parallel()
	tm := mustTiming(t, Schedule{Name: "a", Every: 5 * time.Second})
	at := time.Date(2026, 1, 1, 0, 0, 3, 500, time.UTC)
	if got := tm.Next(at); !got.Equal(time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)) {
		t.Errorf("next after %v: %v", at, got)
	}
	if got := tm.Next(time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)); !got.Equal(time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)) {
		t.Errorf("next after a slot: %v, want the one after", got)
	}
}

// In New York, 2026: the clocks go from 02:00 to 03:00 on 8 March and
// back from 02:00 to 01:00 on 1 November.
func TestDaylightSavingNeitherSkipsNorDoubles(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err) // the tzdata of the Go toolchain is always there in CI
	}
	day := func(m time.Month, d int) (time.Time, time.Time) {
		return time.Date(2026, m, d, 0, 0, 0, 0, ny), time.Date(2026, m, d+1, 0, 0, 0, 0, ny)
	}
	local := func(ts []time.Time) string {
		var s []string
		for _, at := range ts {
			s = append(s, at.In(ny).Format("Jan 2 15:04 MST"))
		}
		return strings.Join(s, ", ")
	}
	for _, c := range []struct {
		name, cron string
		m          time.Month
		d          int
		want       string
	}{
		{"daily at a skipped time runs at the change", "30 2 * * *", time.March, 8, "Mar 8 03:00 EDT"},
		{"daily at a repeated time runs once", "30 1 * * *", time.November, 1, "Nov 1 01:30 EDT"},
		{"daily on either side of the change", "0 4 * * *", time.March, 8, "Mar 8 04:00 EDT"},
		{"some hours, the repeated one once", "0 0-2 * * *", time.November, 1, "Nov 1 00:00 EDT, Nov 1 01:00 EDT, Nov 1 02:00 EST"},
		{"some hours, the skipped one at the change", "0 1-3 * * *", time.March, 8, "Mar 8 01:00 EST, Mar 8 03:00 EDT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tm := mustTiming(t, Schedule{Name: "a", Cron: c.cron, Zone: "America/New_York"})
			from, to := day(c.m, c.d)
			if got := local(slots(tm, from, to)); got != c.want {
				t.Errorf("%s on %s %d: %s, want %s", c.cron, c.m, c.d, got, c.want)
			}
		})
	}
	// Every real hour has its slot, an hour after the one before.
	for _, cr := range []string{"0 * * * *", "@hourly", "30 * * * *"} {
		tm := mustTiming(t, Schedule{Name: "a", Cron: cr, Zone: "America/New_York"})
		for _, c := range []struct {
			m    time.Month
			d, n int
		}{{time.March, 8, 23}, {time.November, 1, 25}, {time.November, 2, 24}} {
			from, to := day(c.m, c.d)
			got := slots(tm, from, to)
			if len(got) != c.n {
				t.Errorf("%s on %s %d: %d slots, want %d: %s", cr, c.m, c.d, len(got), c.n, local(got))
			}
			for i := 1; i < len(got); i++ {
				if d := got[i].Sub(got[i-1]); d != time.Hour {
					t.Errorf("%s: %s then %s: %v apart, want an hour", cr, got[i-1].In(ny), got[i].In(ny), d)
				}
			}
		}
	}
	// A quarter-hourly schedule goes through the skipped hour without a gap
	// longer than its own.
	tm := mustTiming(t, Schedule{Name: "a", Cron: "*/15 * * * *", Zone: "America/New_York"})
	from, to := day(time.March, 8)
	got := slots(tm, from, to)
	if len(got) != 23*4 {
		t.Errorf("*/15 on the day of 23 hours: %d slots, want %d", len(got), 23*4)
	}
	for i := 1; i < len(got); i++ {
		if d := got[i].Sub(got[i-1]); d != 15*time.Minute {
			t.Errorf("*/15: %s then %s: %v apart", got[i-1].In(ny), got[i].In(ny), d)
		}
	}
}

func TestTimingErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    Schedule
		want string
	}{
		{Schedule{Name: "a"}, "no cron and no every"},
		{Schedule{Name: "", Every: time.Second}, "name: want a name"},
		{Schedule{Name: "a b", Every: time.Second}, `' ' is not allowed`},
		{Schedule{Name: "a", Cron: "* * * *"}, "has 4 fields"},
		{Schedule{Name: "a", Cron: "* * * * * *"}, "has 6 fields"},
		{Schedule{Name: "a", Cron: "61 * * * *"}, "above maximum"},
		{Schedule{Name: "a", Cron: "@every 5m"}, "write an interval as every"},
		{Schedule{Name: "a", Cron: "TZ=UTC 0 * * * *"}, "set the time zone with zone"},
		{Schedule{Name: "a", Cron: "@fortnightly"}, "unrecognized descriptor"},
		{Schedule{Name: "a", Cron: "0 0 30 2 *"}, "never comes"},
		{Schedule{Name: "a", Cron: "0 * * * *", Every: time.Minute}, "want one of them"},
		{Schedule{Name: "a", Every: 1500 * time.Millisecond}, "whole number of seconds"},
		{Schedule{Name: "a", Every: time.Minute, Zone: "Europe/Paris"}, "set a zone with cron"},
		{Schedule{Name: "a", Cron: "@daily", Zone: "Mars/Olympus"}, "want an IANA time zone"},
		{Schedule{Name: "a", Cron: "@daily", Zone: "Local"}, "want an IANA time zone"},
	} {
		_, err := c.s.Timing()
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error matching ErrInvalid with %q", c.s, err, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := Schedule{Name: "nightly", Cron: "@daily", Task: Task{Kind: "report"}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*Schedule)
		want string
	}{
		{func(s *Schedule) { s.Task.Kind = "" }, "no kind"},
		{func(s *Schedule) { s.Task.Args = []byte("{") }, "args"},
		{func(s *Schedule) { s.Task.Policy = "10 5x" }, "policy"},
		{func(s *Schedule) { s.Overlap = "queue" }, "want skip, buffer_one or allow"},
		{func(s *Schedule) { s.Jitter = 48 * time.Hour }, "jitter"},
		{func(s *Schedule) { s.CatchUp = -time.Second }, "catch_up"},
		{func(s *Schedule) { s.PauseAfter = 1000 }, "pause_after"},
	} {
		s := ok
		c.edit(&s)
		if err := s.Validate(); err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", s, err, c.want)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	t.Parallel()
	slot := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
	name, at, trigger, ok := ParseKey(Key("reports/nightly", slot))
	if !ok || name != "reports/nightly" || !at.Equal(slot) || trigger {
		t.Errorf("ParseKey(Key): %q %v %v %v", name, at, trigger, ok)
	}
	now := slot.Add(1234567 * time.Nanosecond)
	if name, at, trigger, ok := ParseKey(TriggerKey("a", now)); !ok || name != "a" || !at.Equal(now) || !trigger {
		t.Errorf("ParseKey(TriggerKey): %q %v %v %v", name, at, trigger, ok)
	}
	for _, k := range []string{"", "schedule:", "schedule:a", "schedule:a@x", "other:a@2026-03-08T07:00:00Z"} {
		if _, _, _, ok := ParseKey(k); ok {
			t.Errorf("ParseKey(%q) read it", k)
		}
	}
}

func TestJitterIsTheSameEverywhereAndBounded(t *testing.T) {
	t.Parallel()
	slot := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
	seen := map[time.Duration]bool{}
	for i := range 100 {
		at := slot.Add(time.Duration(i) * time.Minute)
		j := JitterFor("a", time.Minute, at)
		if j != JitterFor("a", time.Minute, at) || j < 0 || j > time.Minute {
			t.Fatalf("jitter %v for %v", j, at)
		}
		seen[j] = true
	}
	if len(seen) < 50 {
		t.Errorf("jitter of 100 slots took %d values: not spread", len(seen))
	}
	if JitterFor("a", 0, slot) != 0 {
		t.Error("no jitter delayed a slot")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	s := Schedule{Name: "a", Every: 90 * time.Second, Jitter: time.Second, CatchUp: time.Hour, PauseAfter: 3,
		Task: Task{Kind: "k", Args: []byte(`{"x":1}`), Timeout: 20 * time.Minute, Priority: 2}}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if want := `"every":"1m30s"`; !strings.Contains(string(b), want) || !strings.Contains(string(b), `"timeout":"20m0s"`) {
		t.Errorf("encoded %s, want durations written as such (%s)", b, want)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if w := s.OrDefault(); got.Every != w.Every || got.Task.Timeout != w.Task.Timeout || got.Zone != "UTC" || string(got.Task.Args) != `{"x":1}` || got.PauseAfter != 3 {
		t.Errorf("decoded %+v, want %+v", got, w)
	}
	if _, err := Decode([]byte(`{"name":"a","every":"soon"}`)); err == nil {
		t.Error("a bad duration decoded")
	}
}

// A scheduled task's auto timeout is written "auto" and read back as
// task.AutoTimeout.
func TestJSONAutoTimeout(t *testing.T) {
	t.Parallel()
	s := Schedule{Name: "a", Every: time.Minute, Task: Task{Kind: "k", Timeout: task.AutoTimeout}}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"timeout":"auto"`) {
		t.Errorf("encoded %s, want the timeout as auto", b)
	}
	if got, err := Decode(b); err != nil || got.Task.Timeout != task.AutoTimeout {
		t.Errorf("decoded %+v (%v), want task.AutoTimeout", got.Task, err)
	}
}
