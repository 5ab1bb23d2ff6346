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
	f.Add([]byte(limitsFile))
	for _, tt := range invalidLimitTests {
		f.Add([]byte(tt.yaml))
	}
	for _, tt := range validScheduleTests {
		f.Add([]byte(tt.yaml))
	}
	f.Add([]byte("name: s\ndefaults: {snooze: 1m, max_snoozes: 3, retry_on_exit: [4]}\ntasks:\n  a: {run: x, snooze_on_exit: [3, 5], snooze: 10s}\n  b: {run: y, needs: a}\n"))
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
	checkFuzzExits(t, tk)
	var e task.Exec
	if err := json.Unmarshal(args, &e); err != nil {
		t.Fatalf("task %q: args %s: %v", tk.Name, args, err)
	}
	again, _ := json.Marshal(e)
	if !bytes.Equal(again, args) {
		t.Fatalf("task %q: args %s read back as %s", tk.Name, args, again)
	}
}

// checkFuzzExits checks the exit-code lists and the snooze settings of a
// task Parse accepted: codes from 1 to 255, each in one list, 75 only as
// transient, and a snooze's delay and bound only on a task that snoozes.
func checkFuzzExits(t *testing.T, tk taskfile.Task) {
	x := tk.Exec
	seen := map[int]string{}
	for name, codes := range map[string][]int{
		"retry_on_exit": x.RetryOnExit, "permanent_on_exit": x.PermanentOnExit,
		"resource_on_exit": x.ResourceOnExit, "snooze_on_exit": x.SnoozeOnExit,
	} {
		for _, c := range codes {
			if c < 1 || c > 255 || (c == 75 && name != "retry_on_exit") {
				t.Fatalf("task %q: %s holds exit code %d", tk.Name, name, c)
			}
			if other, dup := seen[c]; dup && other != name {
				t.Fatalf("task %q: exit code %d is in both %s and %s", tk.Name, c, other, name)
			}
			seen[c] = name
		}
	}
	switch {
	case x.Snooze < 0 || x.MaxSnoozes < 0:
		t.Fatalf("task %q: snooze %v, max_snoozes %d", tk.Name, x.Snooze, x.MaxSnoozes)
	case len(x.SnoozeOnExit) == 0 && (x.Snooze != 0 || x.MaxSnoozes != 0):
		t.Fatalf("task %q: snooze %v, max_snoozes %d without snooze_on_exit", tk.Name, x.Snooze, x.MaxSnoozes)
	}
}
