package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Timing is a schedule's slots: the instants its Cron (read in its Zone)
// or its Every names.
type Timing struct {
	every time.Duration
	spec  *cron.SpecSchedule // on wall-clock times, written as UTC
	loc   *time.Location
	// allHours is a cron whose hour field takes every hour: it follows
	// the real hours through a daylight-saving change.
	allHours bool
}

// cronParser reads the five standard fields and the @ names. The fields
// are robfig/cron's, as Kubernetes' CronJobs read them.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// cronExample ends an error about a cron expression.
const cronExample = `five fields, minute hour day-of-month month day-of-week, e.g. "0 2 * * *" for 02:00 every day, "*/15 * * * 1-5" for every quarter hour on weekdays, or @hourly, @daily, @weekly, @monthly, @yearly`

// Timing checks s's name, Cron, Every and Zone, and returns its slots.
func (s Schedule) Timing() (Timing, error) {
	bad := func(format string, args ...any) (Timing, error) {
		return Timing{}, fmt.Errorf("%w: schedule %q: %s", ErrInvalid, s.Name, fmt.Sprintf(format, args...))
	}
	if p := nameProblem(s.Name); p != "" {
		return bad("name: %s", p)
	}
	zone := s.Zone
	if zone == "" {
		zone = "UTC"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil || strings.EqualFold(zone, "local") {
		return bad("zone %q: want an IANA time zone, e.g. UTC, Europe/Paris, America/New_York", s.Zone)
	}
	switch {
	case s.Cron != "" && s.Every != 0:
		return bad("both cron %q and every %v: want one of them", s.Cron, s.Every)
	case s.Every < 0 || (s.Every > 0 && (s.Every < time.Second || s.Every%time.Second != 0)):
		return bad("every %v: want a whole number of seconds, 1s or more", s.Every)
	case s.Every > 0:
		if s.Zone != "" && zone != "UTC" {
			return bad("zone %q with every %v: an interval's slots are the same instants in every zone; set a zone with cron", s.Zone, s.Every)
		}
		return Timing{every: s.Every, loc: time.UTC}, nil
	case s.Cron == "":
		return bad("no cron and no every: want cron (%s) or every (an interval such as 30s or 1h)", cronExample)
	}
	return parseCron(s.Cron, loc, bad)
}

func parseCron(expr string, loc *time.Location, bad func(string, ...any) (Timing, error)) (Timing, error) {
	e := strings.TrimSpace(expr)
	switch {
	case strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ="):
		return bad("cron %q: set the time zone with zone, not in the expression", expr)
	case strings.HasPrefix(e, "@every"):
		return bad("cron %q: write an interval as every (e.g. every: 5m), not in cron", expr)
	case !strings.HasPrefix(e, "@") && len(strings.Fields(e)) != 5:
		return bad("cron %q has %d fields: want %s", expr, len(strings.Fields(e)), cronExample)
	}
	parsed, err := cronParser.Parse(e)
	if err != nil {
		return bad("cron %q: %v: want %s", expr, strings.TrimPrefix(err.Error(), "failed to parse "), cronExample)
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return bad("cron %q: want %s", expr, cronExample)
	}
	spec.Location = time.UTC // wall-clock times, written as UTC (see Next)
	const everyHour = 1<<24 - 1
	t := Timing{spec: spec, loc: loc, allHours: spec.Hour&everyHour == everyHour}
	if t.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return bad("cron %q never comes (a day that no month has?): want %s", expr, cronExample)
	}
	return t, nil
}

// Next is the first slot after t; zero when there is none.
//
// A cron's slots are wall-clock times in its zone. Through a
// daylight-saving change:
//   - a time that the clocks skip (02:30 when they go from 02:00 to 03:00)
//     comes at the change (03:00), unless the hour field takes every hour:
//     then that hour is not there to have a slot, and the real hours around
//     it keep theirs;
//   - a time that the clocks show twice (01:30 when they go back from 02:00
//     to 01:00) comes once, the first time, unless the hour field takes
//     every hour: then each real hour has its slot.
//
// So a daily job runs once each day, and an hourly one once each real hour.
func (t Timing) Next(after time.Time) time.Time {
	if t.every > 0 {
		return after.UTC().Truncate(t.every).Add(t.every)
	}
	if t.spec == nil {
		return time.Time{}
	}
	// Near a change, the clocks may show again a time already past:
	// start early enough to see it.
	start := after
	_, o1 := after.Add(-3 * time.Hour).In(t.loc).Zone()
	if _, o2 := after.Add(3 * time.Hour).In(t.loc).Zone(); o1 != o2 {
		start = after.Add(-3 * time.Hour)
	}
	w := wall(start, t.loc).Add(-time.Second)
	for range 100_000 { // bounded: a slot of a valid cron comes within years
		w = t.spec.Next(w)
		if w.IsZero() {
			return time.Time{}
		}
		for _, in := range t.instants(w) {
			if in.After(after) {
				return in
			}
		}
	}
	return time.Time{}
}

// wall is t's wall-clock time in loc, written as UTC.
func wall(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), 0, time.UTC)
}

// instants are the slots of wall-clock time w (written as UTC), earliest
// first: none, one or two (see Next).
func (t Timing) instants(w time.Time) []time.Time {
	var got []time.Time
	seen := map[int]bool{}
	for _, probe := range []time.Duration{-30 * time.Hour, 0, 30 * time.Hour} {
		_, off := w.Add(probe).In(t.loc).Zone()
		if seen[off] {
			continue
		}
		seen[off] = true
		in := w.Add(-time.Duration(off) * time.Second)
		if wall(in, t.loc).Equal(w) {
			got = append(got, in)
		}
	}
	switch {
	case len(got) == 0 && t.allHours:
		return nil
	case len(got) == 0:
		// Skipped by the clocks: the slot comes at the change, the first
		// instant after the gap. Read with the offset from before it,
		// the time is past the change.
		_, before := w.Add(-30 * time.Hour).In(t.loc).Zone()
		start, _ := w.Add(-time.Duration(before) * time.Second).In(t.loc).ZoneBounds()
		return []time.Time{start.UTC()}
	case len(got) == 2 && got[1].Before(got[0]):
		got[0], got[1] = got[1], got[0]
	}
	if len(got) == 2 && !t.allHours {
		got = got[:1]
	}
	return got
}

// Every is the interval of an Every schedule; 0 for a cron.
func (t Timing) Every() time.Duration { return t.every }
