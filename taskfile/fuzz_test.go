package taskfile_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
	"github.com/grit-run/grit/taskfile"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte(briefFile))
	f.Add([]byte(dag))
	f.Add([]byte("name: q\ntasks:\n  load:\n    run: ./load.sh\n    quarantine: {kind: load-row, max: 10, max_share: 0.01}\n"))
	for _, tt := range validTests {
		f.Add([]byte(tt.yaml))
	}
	for _, tt := range invalidTests {
		f.Add([]byte(tt.yaml))
	}
	for _, tt := range validScheduleTests {
		f.Add([]byte(tt.yaml))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := taskfile.Parse("fuzz.yaml", data)
		if err != nil {
			checkFuzzError(t, data, file, err)
			return
		}
		run, err := file.NewRun("key")
		if err != nil {
			t.Fatalf("Parse succeeded but NewRun failed: %v", err)
		}
		if len(run.Tasks) != len(file.Tasks) || len(run.Tasks) == 0 {
			t.Fatalf("NewRun has %d tasks, the file %d", len(run.Tasks), len(file.Tasks))
		}
		for i, nt := range run.Tasks {
			checkFuzzTask(t, file.Tasks[i], nt.Policy, nt.Args)
		}
		checkFuzzSchedules(t, file)
	})
}

// checkFuzzSchedules checks that the schedules of a file Parse accepted
// can be kept, each enqueuing a task of the file.
func checkFuzzSchedules(t *testing.T, file *taskfile.File) {
	seen := make(map[string]bool, len(file.Schedules))
	for _, s := range file.Schedules {
		if seen[s.Name] {
			t.Fatalf("schedule %q twice", s.Name)
		}
		seen[s.Name] = true
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted a schedule that Validate refuses: %v", err)
		}
		if s.Task.Kind != task.KindExec {
			t.Fatalf("schedule %q: task of kind %q", s.Name, s.Task.Kind)
		}
		if _, err := s.Encode(); err != nil {
			t.Fatalf("schedule %q: %v", s.Name, err)
		}
		var e task.Exec
		if err := json.Unmarshal(s.Task.Args, &e); err != nil || (len(e.Argv) == 0) == (e.Shell == "") {
			t.Fatalf("schedule %q: args %s: %v", s.Name, s.Task.Args, err)
		}
	}
}

func checkFuzzError(t *testing.T, data []byte, file *taskfile.File, err error) {
	if file != nil {
		t.Fatalf("Parse returned a File with the error %v", err)
	}
	lines := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) + 1
	for _, e := range errorsOf(t, err) {
		if e.Line < 1 || e.Line > lines {
			t.Fatalf("error on line %d of a %d-line file: %v", e.Line, lines, e)
		}
		if !strings.HasPrefix(e.Error(), "taskfile fuzz.yaml:") || !strings.Contains(e.Msg, "(") {
			t.Fatalf("error %q does not read taskfile PATH:LINE: what (how to fix)", e)
		}
	}
}

func checkFuzzTask(t *testing.T, tk taskfile.Task, policy string, args json.RawMessage) {
	if (len(tk.Exec.Argv) == 0) == (tk.Exec.Shell == "") {
		t.Fatalf("task %q: Exec has not exactly one of Argv and Shell: %+v", tk.Name, tk.Exec)
	}
	if tk.PolicySet {
		p, err := retry.Parse(policy)
		if err != nil {
			t.Fatalf("task %q: its policy %q does not parse: %v", tk.Name, policy, err)
		}
		if p.String() != policy || p.MaxAttempts != tk.Policy.MaxAttempts || p.MaxElapsed != tk.Policy.MaxElapsed {
			t.Fatalf("task %q: policy %+v written as %q reads back as %q", tk.Name, tk.Policy, policy, p)
		}
	} else if policy != "" {
		t.Fatalf("task %q: policy %q without PolicySet", tk.Name, policy)
	}
	var e task.Exec
	if err := json.Unmarshal(args, &e); err != nil {
		t.Fatalf("task %q: args %s: %v", tk.Name, args, err)
	}
	again, _ := json.Marshal(e)
	if !bytes.Equal(again, args) {
		t.Fatalf("task %q: args %s read back as %s", tk.Name, args, again)
	}
}
