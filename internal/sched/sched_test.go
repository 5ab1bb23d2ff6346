package sched

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/alert"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres/pgtest"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/store/sqlite/sqlitetest"
	"github.com/grit-run/grit/task"
)

// bothStores opens each store kind for a subtest.
var bothStores = map[string]func(t testing.TB) store.Store{
	"sqlite": func(t testing.TB) store.Store {
		st, err := sqlite.Open(context.Background(), sqlitetest.Path(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	},
	"postgres": func(t testing.TB) store.Store { return pgtest.Open(t) },
}

// base is the start of a test's simulated time: in the past, so that the
// slots' tasks are due on the store's clock and can be claimed.
func base() time.Time { return time.Now().Add(-3 * time.Hour).Truncate(time.Hour) }

var ctx = context.Background()

func declared(t *testing.T, st store.Store, now time.Time, s schedule.Schedule) {
	t.Helper()
	if s.Task.Kind == "" {
		s.Task.Kind = "tick"
	}
	if err := Declare(ctx, st, now, s); err != nil {
		t.Fatal(err)
	}
}

func tick(t *testing.T, k *Ticker, now time.Time) {
	t.Helper()
	if err := k.Tick(ctx, now); err != nil {
		t.Fatalf("tick at %v: %v", now, err)
	}
}

func state(t *testing.T, st store.Store, name string) State {
	t.Helper()
	r, err := st.(store.Scheduler).GetSchedule(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeState(r.State)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// slotsOf lists the slots of the tasks of kind, in order, as their keys say.
func slotsOf(t *testing.T, st store.Store, kind string) []time.Time {
	t.Helper()
	ts, err := st.ListTasks(ctx, task.Filter{Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	seen := map[time.Time]bool{}
	for _, x := range ts {
		_, at, _, ok := schedule.ParseKey(x.IdempotencyKey)
		if !ok {
			t.Fatalf("task %d has key %q, not a schedule's", x.ID, x.IdempotencyKey)
		}
		if seen[at] {
			t.Errorf("slot %v has two tasks", at)
		}
		seen[at] = true
		out = append(out, at)
	}
	return out
}

// endAll claims every due task of kind and ends it in state.
func endAll(t *testing.T, st store.Store, kind string, state task.State) int {
	t.Helper()
	got, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{kind}, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var fs []store.Finish
	for _, c := range got {
		fs = append(fs, store.Finish{TaskID: c.ID, Token: c.LeaseToken, State: state, Error: "boom",
			Attempt: task.Attempt{Outcome: task.OutcomeError, Error: "boom"}})
	}
	if len(fs) > 0 {
		if _, err := st.Finish(ctx, fs); err != nil {
			t.Fatal(err)
		}
	}
	return len(got)
}

// TestOneTaskPerSlotWhateverTheTickers: three tickers ticking the same
// slots at once make one task per slot.
func TestOneTaskPerSlotWhateverTheTickers(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			t0 := base()
			declared(t, st, t0, schedule.Schedule{Name: "s", Every: time.Second, Overlap: schedule.Allow})
			var wg sync.WaitGroup
			for range 3 {
				k := &Ticker{Store: st}
				wg.Go(func() {
					for i := 1; i <= 10; i++ {
						if err := k.Tick(ctx, t0.Add(time.Duration(i)*time.Second)); err != nil {
							t.Error(err)
						}
					}
				})
			}
			wg.Wait()
			got := slotsOf(t, st, "tick")
			// Each tick may lose its schedule to another; the slots it
			// left come at the next one. The last tick's slot may wait.
			if len(got) < 9 || len(got) > 10 {
				t.Fatalf("%d tasks for 10 slots: %v", len(got), got)
			}
			for i, at := range got {
				if want := t0.Add(time.Duration(i+1) * time.Second); !at.Equal(want) {
					t.Errorf("task %d is for slot %v, want %v", i, at, want)
				}
			}
		})
	}
}

// TestCatchUpWithinTheWindowSkipsTheRest: a fleet down for five minutes
// runs the slots of the catch-up window once each and counts the others
// missed.
func TestCatchUpWithinTheWindowSkipsTheRest(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			t0 := base()
			declared(t, st, t0, schedule.Schedule{Name: "s", Every: 10 * time.Second, CatchUp: 2 * time.Minute})
			k := &Ticker{Store: st}
			tick(t, k, t0.Add(10*time.Second))
			if n := endAll(t, st, "tick", task.Success); n != 1 {
				t.Fatalf("%d tasks before the fleet went down, want 1", n)
			}
			back := t0.Add(5*time.Minute + 10*time.Second)
			tick(t, k, back)
			got := slotsOf(t, st, "tick")
			if len(got) != 1+13 {
				t.Fatalf("%d tasks, want 1 before and 13 caught up (3m10s to 5m10s): %v", len(got), got)
			}
			if first := got[1]; !first.Equal(t0.Add(3*time.Minute + 10*time.Second)) {
				t.Errorf("the first slot caught up is %v, want the oldest in the window", first.Sub(t0))
			}
			s := state(t, st, "s")
			if s.Missed != 17 || s.Enqueued != 14 || !s.Next.Equal(back.Add(10*time.Second)) {
				t.Errorf("state %+v: want 17 missed (20s to 3m), 14 enqueued, next at 5m20s", s)
			}
			tick(t, k, back.Add(5*time.Second))
			if n := len(slotsOf(t, st, "tick")); n != 14 {
				t.Errorf("a tick between slots made tasks: %d", n)
			}
		})
	}
}

func TestOverlapPolicies(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct {
				overlap schedule.Overlap
				// the slots (of 10s, 20s, 30s) with tasks while the first is
				// unfinished, then once it has ended and a tick came.
				during, after []int
				overlapped    int64
			}{
				{schedule.Skip, []int{10}, []int{10}, 2},
				{schedule.BufferOne, []int{10}, []int{10, 20}, 1},
				{schedule.Allow, []int{10, 20, 30}, []int{10, 20, 30}, 0},
			} {
				t.Run(string(c.overlap), func(t *testing.T) {
					t.Parallel()
					st := open(t)
					t0 := base()
					kind := "k-" + string(c.overlap)
					declared(t, st, t0, schedule.Schedule{Name: "s", Every: 10 * time.Second, Overlap: c.overlap, Task: schedule.Task{Kind: kind}})
					k := &Ticker{Store: st}
					for _, s := range []int{10, 20, 30} {
						tick(t, k, t0.Add(time.Duration(s)*time.Second))
					}
					wantSlots(t, st, kind, t0, c.during)
					// The first task ends; (allow's others too).
					got, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{kind}, Limit: 100})
					if err != nil {
						t.Fatal(err)
					}
					for _, x := range got {
						st.Finish(ctx, []store.Finish{{TaskID: x.ID, Token: x.LeaseToken, State: task.Success}})
					}
					tick(t, k, t0.Add(35*time.Second))
					wantSlots(t, st, kind, t0, c.after)
					if s := state(t, st, "s"); s.Overlapped != c.overlapped {
						t.Errorf("overlapped %d, want %d", s.Overlapped, c.overlapped)
					}
				})
			}
		})
	}
}

func wantSlots(t *testing.T, st store.Store, kind string, t0 time.Time, secs []int) {
	t.Helper()
	got := slotsOf(t, st, kind)
	var want []time.Time
	for _, s := range secs {
		want = append(want, t0.Add(time.Duration(s)*time.Second))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("slots with tasks %v, want %v", got, want)
	}
}

// TestPausesItselfAfterFailedSlots: PauseAfter failed slots in a row pause
// the schedule with an alert; resumed, it counts its failures anew.
func TestPausesItselfAfterFailedSlots(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			t0 := base()
			declared(t, st, t0, schedule.Schedule{Name: "s", Every: 10 * time.Second, PauseAfter: 2})
			var alerts []alert.Event
			k := &Ticker{Store: st, Alert: func(ev alert.Event) { alerts = append(alerts, ev) }}
			at := t0
			// A failure, then a dead letter: both are failed slots, and a
			// dead letter's slot has ended (the next slot is not held
			// back as overlapping it).
			for _, end := range []task.State{task.Failed, task.DeadLetter} {
				at = at.Add(10 * time.Second)
				tick(t, k, at)
				if n := endAll(t, st, "tick", end); n != 1 {
					t.Fatalf("slot at %v: %d tasks, want 1", at.Sub(t0), n)
				}
			}
			tick(t, k, at.Add(Watch)) // sees the second failure
			s := state(t, st, "s")
			if s.Paused == nil || s.Paused.Failed != 2 || s.Paused.Who != "grit" {
				t.Fatalf("after 2 failed slots: %+v, want paused by grit after 2", s)
			}
			if len(alerts) != 1 || alerts[0].Type != alert.SchedulePaused || alerts[0].Schedule != "s" || alerts[0].Error != "boom" || alerts[0].Tasks != 2 {
				t.Errorf("alerts %+v, want one schedule_paused for s with the last error", alerts)
			}
			for range 3 {
				at = at.Add(10 * time.Second)
				tick(t, k, at)
			}
			if n := len(slotsOf(t, st, "tick")); n != 2 {
				t.Errorf("a paused schedule made tasks: %d, want the 2 before", n)
			}
			if _, err := Resume(ctx, st, "s", at); err != nil {
				t.Fatal(err)
			}
			at = at.Add(10 * time.Second)
			tick(t, k, at)
			endAll(t, st, "tick", task.Failed)
			tick(t, k, at.Add(Watch))
			if s := state(t, st, "s"); s.Paused != nil {
				t.Errorf("one failure after the resume paused it again: %+v", s.Paused)
			}
			if n := len(slotsOf(t, st, "tick")); n != 3 {
				t.Errorf("%d tasks, want 3: the paused slots are not caught up", n)
			}
		})
	}
}

func TestTriggerBackfillPauseDeclare(t *testing.T) {
	t.Parallel()
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			t0 := base()
			s := schedule.Schedule{Name: "s", Every: time.Minute, Task: schedule.Task{Kind: "tick"}}
			declared(t, st, t0, s)
			k := &Ticker{Store: st}
			tick(t, k, t0.Add(time.Minute))
			n, added, err := Backfill(ctx, st, "s", t0.Add(-2*time.Minute), t0.Add(2*time.Minute), t0.Add(61*time.Second))
			if err != nil || n != 5 || added != 4 {
				t.Errorf("backfill of -2m to 2m: %d slots, %d new, %v; want 5 and 4 (the slot at 1m has its task)", n, added, err)
			}
			if _, _, err := Backfill(ctx, st, "s", t0, t0.Add(24*time.Hour), t0); err == nil {
				t.Error("a backfill of 1441 slots was allowed")
			}
			a, err := Trigger(ctx, st, "s", t0.Add(70*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := Trigger(ctx, st, "s", t0.Add(71*time.Second))
			if a.ID == b.ID || a.Kind != "tick" {
				t.Errorf("two triggers: tasks %d and %d", a.ID, b.ID)
			}
			if _, err := Pause(ctx, st, "s", "ops", "the downstream is down", t0.Add(72*time.Second)); err != nil {
				t.Fatal(err)
			}
			// Declared again (a restart), it keeps its pause and its slots.
			declared(t, st, t0.Add(80*time.Second), s)
			got := state(t, st, "s")
			if got.Paused == nil || got.Paused.Who != "ops" || !got.Next.Equal(t0.Add(2*time.Minute)) {
				t.Errorf("after a restart: %+v, want the pause kept and the next slot at 2m", got)
			}
			// A new timing starts the slots anew.
			s.Every = 5 * time.Minute
			declared(t, st, t0.Add(80*time.Second), s)
			if got := state(t, st, "s"); !got.Next.Equal(t0.Add(5*time.Minute)) || got.Paused == nil {
				t.Errorf("after a new timing: next %v, paused %v; want 5m and still paused", got.Next.Sub(t0), got.Paused)
			}
			if err := Delete(ctx, st, "s"); err != nil {
				t.Fatal(err)
			}
			if _, err := Trigger(ctx, st, "s", t0); !errors.Is(err, ErrNotFound) {
				t.Errorf("trigger of a deleted schedule: %v", err)
			}
		})
	}
}

// TestDaylightSavingThroughTheStore: a daily schedule in New York, ticked
// every ten minutes through both changes of 2026, has one task a day.
func TestDaylightSavingThroughTheStore(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range bothStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			k := &Ticker{Store: st}
			for _, c := range []struct {
				name, cron string
				from       time.Time
				want       []string
			}{
				{"spring", "30 2 * * *", time.Date(2026, 3, 7, 0, 0, 0, 0, ny), []string{"Mar 7 02:30 EST", "Mar 8 03:00 EDT", "Mar 9 02:30 EDT"}},
				{"autumn", "30 1 * * *", time.Date(2026, 10, 31, 0, 0, 0, 0, ny), []string{"Oct 31 01:30 EDT", "Nov 1 01:30 EDT", "Nov 2 01:30 EST"}},
			} {
				declared(t, st, c.from, schedule.Schedule{Name: c.name, Cron: c.cron, Zone: "America/New_York", Overlap: schedule.Allow, Task: schedule.Task{Kind: c.name}})
				for at := c.from; at.Before(c.from.Add(72 * time.Hour)); at = at.Add(10 * time.Minute) {
					tick(t, k, at)
				}
				var got []string
				for _, at := range slotsOf(t, st, c.name) {
					got = append(got, at.In(ny).Format("Jan 2 15:04 MST"))
				}
				if fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Errorf("%s: slots %v, want %v", c.name, got, c.want)
				}
			}
		})
	}
}
