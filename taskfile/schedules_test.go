package taskfile_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/task"
	"github.com/grit-run/grit/taskfile"
)

// scheduledFile has tasks and schedules; its schedules use every key.
const scheduledFile = `name: reports
defaults:
  retry: "3 1s 30s"
  timeout: 10m
tasks:
  report:
    run: [./report, --day, yesterday]
    queue: reports
    group: warehouse
    tenant: acme
    priority: 5
    grace: 30s
    poison_after: 3
    env: {REGION: eu}
  ping:
    run: curl -fsS https://example.com/health
    retry: never
    timeout: 0s
  mail:
    run: ./mail
    needs: report
schedules:
  nightly-report:
    task: report
    cron: "0 2 * * *"
    zone: Europe/Paris
    jitter: 1m
    overlap: buffer_one
    catch_up: 3h
    pause_after: 3
  health/ping:
    every: 30s
    task: ping
  weekly.report_2:
    task: report
    cron: "@weekly"
    overlap: allow
    pause_after: 0
`

var validScheduleTests = []struct {
	name string
	yaml string
	want []schedule.Schedule
}{
	{
		name: "every key, defaults, policies carried over",
		yaml: scheduledFile,
		want: []schedule.Schedule{
			{
				Name: "nightly-report", Cron: "0 2 * * *", Zone: "Europe/Paris", Jitter: time.Minute,
				Overlap: schedule.BufferOne, CatchUp: 3 * time.Hour, PauseAfter: 3,
				Task: schedule.Task{
					Kind: task.KindExec, Args: json.RawMessage(`{"argv":["./report","--day","yesterday"],"env":["REGION=eu"]}`),
					Queue: "reports", Group: "warehouse", Tenant: "acme", Priority: 5,
					Policy: "3 1s 30s", Timeout: 10 * time.Minute, Grace: 30 * time.Second, PoisonAfter: 3,
				},
			},
			{
				Name: "health/ping", Every: 30 * time.Second,
				Task: schedule.Task{Kind: task.KindExec, Args: json.RawMessage(`{"shell":"curl -fsS https://example.com/health"}`), Policy: "never"},
			},
			{
				Name: "weekly.report_2", Cron: "@weekly", Overlap: schedule.Allow,
				Task: schedule.Task{
					Kind: task.KindExec, Args: json.RawMessage(`{"argv":["./report","--day","yesterday"],"env":["REGION=eu"]}`),
					Queue: "reports", Group: "warehouse", Tenant: "acme", Priority: 5,
					Policy: "3 1s 30s", Timeout: 10 * time.Minute, Grace: 30 * time.Second, PoisonAfter: 3,
				},
			},
		},
	},
	{
		name: "no policy: the engine's",
		yaml: "name: x\ntasks:\n  a: {run: ./a}\nschedules:\n  a: {task: a, every: 1h}\n",
		want: []schedule.Schedule{{Name: "a", Every: time.Hour, Task: schedule.Task{Kind: task.KindExec, Args: json.RawMessage(`{"shell":"./a"}`)}}},
	},
	{
		name: "a policy mapping, as its string",
		yaml: "name: x\ntasks:\n  a: {run: ./a, retry: {attempts: 4, min: 1s, max: 30s}}\nschedules:\n  hourly: {task: a, cron: \"@hourly\", zone: UTC}\n",
		want: []schedule.Schedule{{Name: "hourly", Cron: "@hourly", Zone: "UTC", Task: schedule.Task{Kind: task.KindExec, Args: json.RawMessage(`{"shell":"./a"}`), Policy: "3 1s 30s"}}},
	},
	{
		name: "merge keys",
		yaml: `name: x
x-nightly: &nightly
  cron: "0 3 * * *"
  zone: America/New_York
  catch_up: 30m
tasks:
  a: {run: ./a}
  b: {run: ./b}
schedules:
  a: {<<: *nightly, task: a}
  b: {<<: *nightly, task: b, zone: Asia/Tokyo}
`,
		want: []schedule.Schedule{
			{Name: "a", Cron: "0 3 * * *", Zone: "America/New_York", CatchUp: 30 * time.Minute, Task: schedule.Task{Kind: task.KindExec, Args: json.RawMessage(`{"shell":"./a"}`)}},
			{Name: "b", Cron: "0 3 * * *", Zone: "Asia/Tokyo", CatchUp: 30 * time.Minute, Task: schedule.Task{Kind: task.KindExec, Args: json.RawMessage(`{"shell":"./b"}`)}},
		},
	},
	{
		name: "empty mapping: none",
		yaml: "name: x\ntasks:\n  a: {run: ./a}\nschedules: {}\n",
	},
	{
		name: "no schedules",
		yaml: "name: x\ntasks:\n  a: {run: ./a}\n",
	},
}

func TestParseSchedules(t *testing.T) {
	t.Parallel()
	for _, tt := range validScheduleTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := taskfile.Parse("test.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(f.Schedules) != len(tt.want) {
				t.Fatalf("%d schedules, want %d: %+v", len(f.Schedules), len(tt.want), f.Schedules)
			}
			for i, got := range f.Schedules {
				if want := tt.want[i]; !reflect.DeepEqual(got, want) {
					t.Errorf("schedule %d:\n got %+v\n     args %s\nwant %+v\n     args %s", i, got, got.Task.Args, want, want.Task.Args)
				}
				if err := got.Validate(); err != nil {
					t.Errorf("schedule %s: %v", got.Name, err)
				}
			}
		})
	}
}

// TestScheduleTaskIsTheRunsTask checks that a schedule enqueues its task as
// a run of the file would.
func TestScheduleTaskIsTheRunsTask(t *testing.T) {
	t.Parallel()
	f, err := taskfile.Parse("reports.yaml", []byte(scheduledFile))
	if err != nil {
		t.Fatal(err)
	}
	run, err := f.NewRun("")
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Tasks) != 3 {
		t.Fatalf("the run has %d tasks, want the file's 3", len(run.Tasks))
	}
	slot := time.Date(2026, 1, 2, 1, 0, 0, 0, time.UTC)
	for _, s := range f.Schedules {
		got, err := s.NewTask(slot)
		if err != nil {
			t.Fatal(err)
		}
		want := run.Tasks[0] // report
		if s.Name == "health/ping" {
			want = run.Tasks[1]
		}
		want.Name, want.RunAt, want.IdempotencyKey, want.ReturnExisting = s.Name, got.RunAt, got.IdempotencyKey, true
		if !reflect.DeepEqual(got, want) {
			t.Errorf("schedule %s enqueues\n %+v\nthe run has\n %+v", s.Name, got, want)
		}
	}
}
