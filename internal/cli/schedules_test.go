package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grit-run/grit/internal/poll"
	"github.com/grit-run/grit/store/postgres/pgtest"
)

// scheduleStores are the stores the schedule commands run on.
var scheduleStores = map[string]func(t *testing.T) string{
	"sqlite":   func(t *testing.T) string { return tempStore(t) },
	"postgres": func(t *testing.T) string { return pgtest.WithSchema(pgtest.NewSchema(t)) },
}

// lines counts the lines of a file (0 when it is not there).
func lines(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

func waitLines(t *testing.T, path string, n int, out *lockedBuffer) {
	t.Helper()
	poll.UntilSays(t, 30*time.Second, func() string { return fmt.Sprintf("%s has %d lines, want %d; worker:\n%s", path, lines(path), n, out) },
		func() bool { return lines(path) >= n })
}

// scheduleNamed is the schedule grit schedules --json shows by that name.
func scheduleNamed(t *testing.T, dsn, name string) scheduleJSON {
	t.Helper()
	all := schedulesJSON(t, dsn)
	for _, s := range all {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("grit schedules --json shows no %s: %+v", name, all)
	return scheduleJSON{}
}

func schedulesJSON(t *testing.T, dsn string) []scheduleJSON {
	t.Helper()
	code, out, errOut := grit(t, "schedules", "--json", "--store", dsn)
	var got []scheduleJSON
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("grit schedules --json: %d %q %q", code, out, errOut)
	}
	return got
}

// TestScheduleUnderWorker: a task file's schedule, declared by grit worker
// --schedules, runs a process task at each slot; grit schedules lists,
// pauses, triggers and resumes it; the worker stops cleanly.
func TestScheduleUnderWorker(t *testing.T) {
	t.Parallel()
	for name, open := range scheduleStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn := open(t)
			dir := t.TempDir()
			// The control schedule is never paused: its tasks show the
			// worker ticking the schedules while the other is paused.
			beats, ticks := filepath.Join(dir, "beats"), filepath.Join(dir, "ticks")
			file := writeFile(t, `name: beats
tasks:
  beat:
    run: echo "$GRIT_TASK_ID" >> `+beats+`
    timeout: 10s
  tick:
    run: echo "$GRIT_TASK_ID" >> `+ticks+`
    timeout: 10s
schedules:
  heartbeat:
    task: beat
    every: 1s
    pause_after: 5
  control:
    task: tick
    every: 1s
`)
			worker, wout := gritProcess(t, dir, "worker", "--store", dsn, "--schedules", file, "--drain", "5s")
			waitLines(t, beats, 3, wout)

			got := scheduleNamed(t, dsn, "heartbeat")
			if got.Schedule.Task.Kind != "exec" || got.Enqueued < 3 || len(got.NextSlots) != 3 {
				t.Fatalf("grit schedules --json: %+v, want heartbeat with 3 tasks or more and its next slots", got)
			}
			code, out, errOut := grit(t, "schedules", "--store", dsn)
			if code != 0 || !strings.Contains(out, "heartbeat") || !strings.Contains(out, "every 1s") || !strings.Contains(out, "SUCCESS#") {
				t.Errorf("grit schedules: %d %q %q", code, out, errOut)
			}

			if code, out, errOut := grit(t, "schedules", "pause", "heartbeat", "--reason", "maintenance", "--store", dsn); code != 0 || !strings.Contains(out, "paused") {
				t.Fatalf("pause: %d %q %q", code, out, errOut)
			}
			// A slot whose tick read the schedule before the pause may
			// still come, by the control's second slot after it; then
			// nothing more while the control's slots go on.
			waitLines(t, ticks, lines(ticks)+2, wout)
			paused := lines(beats)
			waitLines(t, ticks, lines(ticks)+3, wout)
			if n := lines(beats); n != paused {
				t.Errorf("a paused schedule ran %d more tasks", n-paused)
			}
			if s := scheduleNamed(t, dsn, "heartbeat"); s.Paused == nil || s.Paused.Reason != "maintenance" || len(s.NextSlots) != 0 {
				t.Errorf("paused: %+v", s)
			}
			if code, out, _ := grit(t, "status", "--store", dsn); code != 0 || !strings.Contains(out, "paused: schedule heartbeat since") || !strings.Contains(out, ": maintenance (grit schedules resume heartbeat)") {
				t.Errorf("grit status does not show the paused schedule: %d\n%s", code, out)
			}
			if code, out, errOut := grit(t, "schedules", "trigger", "heartbeat", "--store", dsn); code != 0 || !strings.Contains(out, "triggered: task") {
				t.Fatalf("trigger: %d %q %q", code, out, errOut)
			}
			waitLines(t, beats, paused+1, wout)
			if code, _, errOut := grit(t, "schedules", "resume", "heartbeat", "--store", dsn); code != 0 {
				t.Fatalf("resume: %d %q", code, errOut)
			}
			waitLines(t, beats, paused+3, wout)

			if err := worker.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, worker, 20*time.Second, wout); code != 0 {
				t.Errorf("worker exited %d after SIGTERM:\n%s", code, wout)
			}
			if !strings.Contains(wout.String(), "schedules_declared=2") {
				t.Errorf("the worker's start does not say it declared the schedule:\n%s", wout)
			}
			// Each slot ran once: the task ids written are all different.
			b, _ := os.ReadFile(beats)
			seen := map[string]bool{}
			for _, id := range strings.Fields(string(b)) {
				if seen[id] {
					t.Errorf("task %s ran twice", id)
				}
				seen[id] = true
			}
		})
	}
}

// TestScheduleCommandsErrors: the commands say what is wrong, exit 2 on
// bad input, and a read-only one makes no store.
func TestScheduleCommandsErrors(t *testing.T) {
	t.Parallel()
	missing := tempStore(t)
	if code, _, _ := grit(t, "schedules", "--store", missing); code == 0 {
		t.Error("grit schedules on a store that is not there succeeded")
	}
	if _, err := os.Stat(strings.TrimPrefix(missing, "sqlite:")); !os.IsNotExist(err) {
		t.Errorf("grit schedules made the store: %v", err)
	}
	dsn := migratedStore(t)
	if code, out, _ := grit(t, "schedules", "--store", dsn); code != 0 || !strings.Contains(out, "no schedules") {
		t.Errorf("no schedules: %d %q", code, out)
	}
	file := writeFile(t, "name: x\ntasks:\n  a:\n    run: \"true\"\nschedules:\n  nightly:\n    task: a\n    cron: \"0 2 * * *\"\n    zone: Europe/Paris\n")
	if code, out, errOut := grit(t, "schedules", "apply", file, "--store", dsn); code != 0 || !strings.Contains(out, "schedule nightly: declared (0 2 * * * Europe/Paris") {
		t.Fatalf("apply: %d %q %q", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"schedules", "pause", "none"}, `no schedule named "none"`},
		{[]string{"schedules", "backfill", "nightly"}, "give --from and --to"},
		{[]string{"schedules", "backfill", "nightly", "--from", "yesterday", "--to", "0s"}, `--from "yesterday": want RFC 3339`},
		{[]string{"schedules", "backfill", "nightly", "--from", "0s", "--to", "48h"}, "is after to"},
		{[]string{"schedules", "backfill", "nightly", "--from", "50000h", "--to", "0s"}, "more than 1000 slots"},
		{[]string{"schedules", "apply", filepath.Join(t.TempDir(), "none.yaml")}, "none.yaml"},
	} {
		code, _, errOut := grit(t, append(c.args, "--store", dsn)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("grit %v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	code, out, errOut := grit(t, "schedules", "backfill", "nightly", "--from", "2026-11-01", "--to", "2026-11-03T02:00", "--store", dsn)
	if code != 0 || !strings.Contains(out, "3 slots, 3 new tasks") {
		t.Errorf("backfill of three nights: %d %q %q", code, out, errOut)
	}
	code, out, _ = grit(t, "schedules", "backfill", "nightly", "--from", "2026-11-01", "--to", "2026-11-03T02:00", "--store", dsn)
	if code != 0 || !strings.Contains(out, "3 slots, 0 new tasks (3 had theirs)") {
		t.Errorf("the same backfill again: %d %q", code, out)
	}
	if code, out, _ := grit(t, "schedules", "delete", "nightly", "--store", dsn); code != 0 || !strings.Contains(out, "deleted") {
		t.Errorf("delete: %d %q", code, out)
	}
}

// FuzzParseWhen reads any backfill time: a time, or a usage error that
// says what to write.
func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"2026-11-01", "2026-11-01T02:00", "2026-11-01 02:00", "2026-11-01T02:00:00Z", "6h", "-1h", "0s", "yesterday", ""} {
		f.Add(s, "Europe/Paris")
	}
	f.Add("2026-03-29T02:30", "Europe/Paris")
	f.Add("1h", "Nowhere/Else")
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s, zone string) {
		at, err := parseWhen("--from", s, zone, now)
		if err != nil {
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "want RFC 3339") {
				t.Fatalf("%q in %q: %v, want a usage error that says what to write", s, zone, err)
			}
			return
		}
		if at.IsZero() && s != "" {
			t.Fatalf("%q: the zero time", s)
		}
	})
}
