package taskfile_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
	"github.com/grit-run/grit/taskfile"
)

func TestNewRun(t *testing.T) {
	t.Parallel()
	f, err := taskfile.Parse("settle.yaml", []byte(briefFile+"  report: {run: ./report, needs: settle, retry: never}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.NewRun("settlement-2026-01-02")
	if err != nil {
		t.Fatal(err)
	}
	want := task.NewRun{
		Name: "settlement", Key: "settlement-2026-01-02", MaxFailures: 3,
		Tasks: []task.NewTask{
			{
				Name: "fetch", Kind: task.KindExec,
				Args:    json.RawMessage(`{"shell":"./fetch.sh --day today"}`),
				Policy:  "3 1s 30s",
				Timeout: 30 * time.Second,
			},
			{
				Name: "settle", Kind: task.KindExec,
				Args: json.RawMessage(`{"argv":["./settle","--merchant","42"],"env":["REGION=eu"],"dir":"./work",` +
					`"retry_on_exit":[3,4],"permanent_on_exit":[2],"resource_on_exit":[5]}`),
				Queue: "default", Group: "payments-api", Priority: 0,
				Policy: "4 1s 30s max_elapsed=5m", PoisonAfter: 2,
				Timeout: 10 * time.Second, Grace: 2 * time.Second,
				Needs: []string{"fetch"},
			},
			{
				Name: "report", Kind: task.KindExec,
				Args:   json.RawMessage(`{"shell":"./report"}`),
				Policy: "never", Timeout: 30 * time.Second,
				Needs: []string{"settle"},
			},
		},
	}
	if len(r.Tasks) != len(want.Tasks) {
		t.Fatalf("%d tasks, want %d", len(r.Tasks), len(want.Tasks))
	}
	for i := range r.Tasks {
		if got, w := r.Tasks[i], want.Tasks[i]; !reflect.DeepEqual(got, w) {
			t.Errorf("task %d:\n got %+v\n     args %s\nwant %+v\n     args %s", i, got, got.Args, w, w.Args)
		}
	}
	r.Tasks, want.Tasks = nil, nil
	if !reflect.DeepEqual(r, want) {
		t.Errorf("run = %+v, want %+v", r, want)
	}
}

// TestNewRunPolicyRoundTrip checks that the policy string a store keeps
// gives back the policy of the file.
func TestNewRunPolicyRoundTrip(t *testing.T) {
	t.Parallel()
	f, err := taskfile.Parse("p.yaml", []byte(validTests[3].yaml))
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.NewRun("")
	if err != nil {
		t.Fatal(err)
	}
	for i, nt := range r.Tasks {
		p, err := retry.Parse(nt.Policy)
		if err != nil {
			t.Fatalf("task %s: policy %q: %v", nt.Name, nt.Policy, err)
		}
		want := f.Tasks[i].Policy
		if p.String() != want.String() || p.MaxAttempts != want.MaxAttempts ||
			p.ExplicitOnly != want.ExplicitOnly || !reflect.DeepEqual(p.Classes, want.Classes) {
			t.Errorf("task %s: policy %q parses as %q", nt.Name, nt.Policy, p.String())
		}
	}
}

func TestNewRunChecksFilesBuiltInGo(t *testing.T) {
	t.Parallel()
	ok := taskfile.Task{Name: "a", Exec: task.Exec{Shell: "x"}}
	tests := []struct {
		name string
		file taskfile.File
		want string
	}{
		{"zero File", taskfile.File{}, `taskfile: the run's name "" is blank`},
		{"no tasks", taskfile.File{Name: "r"}, "taskfile: the file has no tasks"},
		{"bad name", taskfile.File{Name: "r", Tasks: []taskfile.Task{{Name: "a b", Exec: ok.Exec}}}, `task name "a b" is not valid`},
		{"twice", taskfile.File{Name: "r", Tasks: []taskfile.Task{ok, ok}}, `taskfile: task "a" is defined twice (rename or remove one)`},
		{"no command", taskfile.File{Name: "r", Tasks: []taskfile.Task{{Name: "a"}}}, "needs exactly one of Exec.Argv and Exec.Shell"},
		{"both commands", taskfile.File{Name: "r", Tasks: []taskfile.Task{{Name: "a", Exec: task.Exec{Shell: "x", Argv: []string{"x"}}}}}, "needs exactly one"},
		{"unknown need", taskfile.File{Path: "go", Name: "r", Tasks: []taskfile.Task{{Name: "a", Exec: ok.Exec, Needs: []string{"b"}}}}, `taskfile go: task "a" needs "b", which is not a task`},
		{"cycle", taskfile.File{Name: "r", Tasks: []taskfile.Task{
			{Name: "a", Exec: ok.Exec, Needs: []string{"b"}},
			{Name: "b", Exec: ok.Exec, Needs: []string{"a"}},
		}}, "cycle: a -> b -> a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.file.NewRun("")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewRun error = %v, want %q", err, tt.want)
			}
		})
	}
}
