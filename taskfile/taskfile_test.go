package taskfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
	"github.com/grit-run/grit/taskfile"
)

// briefFile uses every key.
const briefFile = `name: settlement
max_failures: 3
defaults:
  retry: "3 1s 30s"
  timeout: 30s
tasks:
  fetch:
    run: ./fetch.sh --day today
  settle:
    run: [./settle, --merchant, "42"]
    needs: [fetch]
    retry:
      attempts: 5
      min: 1s
      max: 30s
      multiplier: 2
      jitter: full
      max_elapsed: 5m
    timeout: 10s
    grace: 2s
    group: payments-api
    queue: default
    priority: 0
    poison_after: 2
    retry_on_exit: [3, 4]
    permanent_on_exit: [2]
    resource_on_exit: [5]
    env: {REGION: eu}
    dir: ./work
`

var validTests = []struct {
	name string
	yaml string
	want *taskfile.File
}{
	{
		name: "every key",
		yaml: briefFile,
		want: &taskfile.File{Name: "settlement", MaxFailures: 3, Tasks: []taskfile.Task{
			{
				Name: "fetch", Line: 7,
				Exec:   task.Exec{Shell: "./fetch.sh --day today"},
				Policy: retry.Policy{MaxAttempts: 4, Backoff: retry.Exponential{Min: time.Second, Max: 30 * time.Second}}, PolicySet: true,
				Timeout: 30 * time.Second,
			},
			{
				Name: "settle", Line: 9,
				Exec: task.Exec{
					Argv: []string{"./settle", "--merchant", "42"},
					Env:  []string{"REGION=eu"}, Dir: "./work",
					RetryOnExit: []int{3, 4}, PermanentOnExit: []int{2}, ResourceOnExit: []int{5},
				},
				Needs: []string{"fetch"},
				Policy: retry.Policy{
					MaxAttempts: 5, MaxElapsed: 5 * time.Minute,
					Backoff: retry.Exponential{Min: time.Second, Max: 30 * time.Second, Multiplier: 2, Jitter: retry.JitterFull},
				},
				PolicySet: true,
				Timeout:   10 * time.Second, Grace: 2 * time.Second,
				Group: "payments-api", Queue: "default", Priority: 0, PoisonAfter: 2,
			},
		}},
	},
	{
		name: "minimal",
		yaml: "name: nightly\ntasks:\n  a: {run: make}\n",
		want: &taskfile.File{Name: "nightly", Tasks: []taskfile.Task{
			{Name: "a", Line: 3, Exec: task.Exec{Shell: "make"}},
		}},
	},
	{
		name: "auto timeout",
		yaml: "name: nightly\ndefaults: {timeout: auto}\ntasks:\n  a: {run: make}\n  b: {run: make, timeout: 10m}\n  c: {run: make, timeout: Auto}\n",
		want: &taskfile.File{Name: "nightly", Tasks: []taskfile.Task{
			{Name: "a", Line: 4, Exec: task.Exec{Shell: "make"}, Timeout: task.AutoTimeout},
			{Name: "b", Line: 5, Exec: task.Exec{Shell: "make"}, Timeout: 10 * time.Minute},
			{Name: "c", Line: 6, Exec: task.Exec{Shell: "make"}, Timeout: task.AutoTimeout},
		}},
	},
	{
		name: "defaults merge per key",
		yaml: `name: merge
defaults:
  retry: {attempts: 3, min: 2s}
  timeout: 1m
  grace: 3s
  group: db
  queue: slow
  tenant: acme
  priority: 5
  poison_after: 4
  retry_on_exit: [3]
  permanent_on_exit: 2
  env: {REGION: us, LEVEL: 1}
  dir: /srv
tasks:
  inherit:
    run: a
  override:
    run: b
    retry: "never"
    timeout: 0s
    grace: 1s
    group: api
    queue: fast
    tenant: globex
    priority: -1
    poison_after: 9
    retry_on_exit: []
    resource_on_exit: [9]
    env: {REGION: eu, EXTRA: "x y"}
    dir: /tmp
`,
		want: &taskfile.File{Name: "merge", Tasks: []taskfile.Task{
			{
				Name: "inherit", Line: 16,
				Exec: task.Exec{
					Shell: "a", Env: []string{"LEVEL=1", "REGION=us"}, Dir: "/srv",
					RetryOnExit: []int{3}, PermanentOnExit: []int{2},
				},
				Policy: retry.Policy{MaxAttempts: 3, Backoff: retry.Constant{Interval: 2 * time.Second}}, PolicySet: true,
				Timeout: time.Minute, Grace: 3 * time.Second, Group: "db", Queue: "slow", Tenant: "acme", Priority: 5, PoisonAfter: 4,
			},
			{
				Name: "override", Line: 18,
				Exec: task.Exec{
					Shell: "b", Env: []string{"EXTRA=x y", "LEVEL=1", "REGION=eu"}, Dir: "/tmp",
					RetryOnExit: []int{}, PermanentOnExit: []int{2}, ResourceOnExit: []int{9},
				},
				Policy: retry.Never, PolicySet: true,
				Timeout: 0, Grace: time.Second, Group: "api", Queue: "fast", Tenant: "globex", Priority: -1, PoisonAfter: 9,
			},
		}},
	},
	{
		name: "retry forms",
		yaml: `name: retries
tasks:
  string: {run: x, retry: "10 5s 10m jitter=equal max_elapsed=1h"}
  constant: {run: x, retry: {min: 5s}}
  only-attempts: {run: x, retry: {attempts: 1}}
  only-max: {run: x, retry: {max: 1m, multiplier: 1.5, jitter: none}}
  decorrelated: {run: x, retry: {attempts: 0, min: 100ms, max: 10s, jitter: decorrelated}}
  forever: {run: x, retry: 5s}
  explicit: {run: x, retry: "3 1s explicit_only"}
  explicit-map: {run: x, retry: {attempts: 4, min: 1s, explicit_only: true}}
  classes: {run: x, retry: "5 1s 1m transient=20,2s,5m"}
  classes-map: {run: x, retry: {attempts: 6, min: 1s, max: 1m, transient: "20,2s,5m", unclassified: never}}
`,
		want: &taskfile.File{Name: "retries", Tasks: []taskfile.Task{
			{
				Name: "string", Line: 3, Exec: task.Exec{Shell: "x"}, PolicySet: true,
				Policy: retry.Policy{MaxAttempts: 11, MaxElapsed: time.Hour, Backoff: retry.Exponential{Min: 5 * time.Second, Max: 10 * time.Minute, Jitter: retry.JitterEqual}},
			},
			{Name: "constant", Line: 4, Exec: task.Exec{Shell: "x"}, PolicySet: true, Policy: retry.Policy{Backoff: retry.Constant{Interval: 5 * time.Second}}},
			{Name: "only-attempts", Line: 5, Exec: task.Exec{Shell: "x"}, PolicySet: true, Policy: retry.Policy{MaxAttempts: 1}},
			{
				Name: "only-max", Line: 6, Exec: task.Exec{Shell: "x"}, PolicySet: true,
				Policy: retry.Policy{Backoff: retry.Exponential{Min: time.Second, Max: time.Minute, Multiplier: 1.5, Jitter: retry.JitterNone}},
			},
			{
				Name: "decorrelated", Line: 7, Exec: task.Exec{Shell: "x"}, PolicySet: true,
				Policy: retry.Policy{Backoff: retry.Decorrelated{Min: 100 * time.Millisecond, Max: 10 * time.Second}},
			},
			{Name: "forever", Line: 8, Exec: task.Exec{Shell: "x"}, PolicySet: true, Policy: retry.Policy{Backoff: retry.Constant{Interval: 5 * time.Second}}},
			{Name: "explicit", Line: 9, Exec: task.Exec{Shell: "x"}, PolicySet: true, Policy: retry.Policy{MaxAttempts: 4, Backoff: retry.Constant{Interval: time.Second}, ExplicitOnly: true}},
			{Name: "explicit-map", Line: 10, Exec: task.Exec{Shell: "x"}, PolicySet: true, Policy: retry.Policy{MaxAttempts: 4, Backoff: retry.Constant{Interval: time.Second}, ExplicitOnly: true}},
			{
				Name: "classes", Line: 11, Exec: task.Exec{Shell: "x"}, PolicySet: true,
				Policy: retry.Policy{MaxAttempts: 6, Backoff: retry.Exponential{Min: time.Second, Max: time.Minute},
					Classes: map[retry.Class]retry.ClassPolicy{retry.ClassTransient: {MaxAttempts: 21, Backoff: retry.Exponential{Min: 2 * time.Second, Max: 5 * time.Minute}}}},
			},
			{
				Name: "classes-map", Line: 12, Exec: task.Exec{Shell: "x"}, PolicySet: true,
				Policy: retry.Policy{MaxAttempts: 6, Backoff: retry.Exponential{Min: time.Second, Max: time.Minute},
					Classes: map[retry.Class]retry.ClassPolicy{
						retry.ClassTransient: {MaxAttempts: 21, Backoff: retry.Exponential{Min: 2 * time.Second, Max: 5 * time.Minute}},
						retry.Unclassified:   {MaxAttempts: 1},
					}},
			},
		}},
	},
	{
		name: "needs forms, scalars converted",
		yaml: `name: needs
tasks:
  a:
    run: |
      echo one
      echo two
  b: {run: [prog, "1", "true"], needs: a}
  c: {run: x, needs: [a, b, a], env: {PORT: 8080, DEBUG: true, RATIO: 1.50, EMPTY: , NULL: null}}
  "007": {run: x, needs: [c], retry_on_exit: [3, 3, 4]}
`,
		want: &taskfile.File{Name: "needs", Tasks: []taskfile.Task{
			{Name: "a", Line: 3, Exec: task.Exec{Shell: "echo one\necho two\n"}},
			{Name: "b", Line: 7, Exec: task.Exec{Argv: []string{"prog", "1", "true"}}, Needs: []string{"a"}},
			{
				Name: "c", Line: 8, Needs: []string{"a", "b"},
				Exec: task.Exec{Shell: "x", Env: []string{"DEBUG=true", "EMPTY=", "NULL=", "PORT=8080", "RATIO=1.50"}},
			},
			{Name: "007", Line: 9, Exec: task.Exec{Shell: "x", RetryOnExit: []int{3, 4}}, Needs: []string{"c"}},
		}},
	},
	{
		name: "snoozes",
		yaml: `name: sensors
defaults:
  snooze: 30s
  max_snoozes: 120
tasks:
  wait-for-file:
    run: test -e /data/ready || exit 3
    snooze_on_exit: 3
  wait-longer:
    run: ./check-upstream
    snooze_on_exit: [3, 4]
    snooze: 5m
    max_snoozes: 0
  plain: {run: make}
`,
		want: &taskfile.File{Name: "sensors", Tasks: []taskfile.Task{
			{Name: "wait-for-file", Line: 6, Exec: task.Exec{Shell: "test -e /data/ready || exit 3", SnoozeOnExit: []int{3}, Snooze: 30 * time.Second, MaxSnoozes: 120}},
			{Name: "wait-longer", Line: 9, Exec: task.Exec{Shell: "./check-upstream", SnoozeOnExit: []int{3, 4}, Snooze: 5 * time.Minute}},
			{Name: "plain", Line: 14, Exec: task.Exec{Shell: "make"}},
		}},
	},
	{
		name: "anchors, aliases and merge keys",
		yaml: `name: yaml
x-common: &common
  timeout: 5s
  env: {A: "1"}
defaults: *common
tasks:
  a: &a
    run: &cmd [./tool, --flag]
    retry_on_exit: [7]
  b:
    <<: *a
    retry_on_exit: [8]
  c:
    run: *cmd
    <<: [{group: g1}, {group: g2, queue: q}]
`,
		want: &taskfile.File{Name: "yaml", Tasks: []taskfile.Task{
			{Name: "a", Line: 7, Timeout: 5 * time.Second, Exec: task.Exec{Argv: []string{"./tool", "--flag"}, Env: []string{"A=1"}, RetryOnExit: []int{7}}},
			{Name: "b", Line: 10, Timeout: 5 * time.Second, Exec: task.Exec{Argv: []string{"./tool", "--flag"}, Env: []string{"A=1"}, RetryOnExit: []int{8}}},
			{Name: "c", Line: 13, Timeout: 5 * time.Second, Group: "g1", Queue: "q", Exec: task.Exec{Argv: []string{"./tool", "--flag"}, Env: []string{"A=1"}}},
		}},
	},
}

func TestParseValid(t *testing.T) {
	t.Parallel()
	for _, tt := range validTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := taskfile.Parse("test.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.want.Path = "test.yaml"
			if f.Name != tt.want.Name || f.MaxFailures != tt.want.MaxFailures || f.Path != tt.want.Path {
				t.Errorf("file = %q %d %q, want %q %d %q", f.Name, f.MaxFailures, f.Path, tt.want.Name, tt.want.MaxFailures, tt.want.Path)
			}
			if len(f.Tasks) != len(tt.want.Tasks) {
				t.Fatalf("%d tasks, want %d: %+v", len(f.Tasks), len(tt.want.Tasks), f.Tasks)
			}
			for i, got := range f.Tasks {
				if want := tt.want.Tasks[i]; !reflect.DeepEqual(got, want) {
					t.Errorf("task %d:\n got %+v\nwant %+v", i, got, want)
				}
			}
		})
	}
}

func TestParseKeepsOrder(t *testing.T) {
	t.Parallel()
	names := []string{"zeta", "alpha", "mu", "beta", "omega", "10", "9", "a.b", "A_b", "c-d"}
	var b strings.Builder
	b.WriteString("name: order\ntasks:\n")
	for i, n := range names {
		fmt.Fprintf(&b, "  %s: {run: step%d}\n", n, i)
	}
	f, err := taskfile.Parse("order.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for i, tk := range f.Tasks {
		if tk.Name != names[i] || tk.Line != i+3 || tk.Exec.Shell != fmt.Sprintf("step%d", i) {
			t.Errorf("task %d = %s (line %d, %q), want %s (line %d)", i, tk.Name, tk.Line, tk.Exec.Shell, names[i], i+3)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "settle.yaml")
	if err := os.WriteFile(path, []byte(briefFile), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := taskfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Path != path || f.Name != "settlement" || len(f.Tasks) != 2 {
		t.Errorf("Load = %+v", f)
	}

	_, err = taskfile.Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "taskfile: ") {
		t.Errorf("Load(missing) = %v, want a taskfile error matching os.ErrNotExist", err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\ntasks:\n  a: {run: x, timout: 1s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = taskfile.Load(bad)
	if want := "taskfile " + bad + `:3: unknown key "timout" (did you mean "timeout"?)`; err == nil || err.Error() != want {
		t.Errorf("Load(bad) = %v, want %s", err, want)
	}
}
