package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDLQActionSaysTheState: an action on a task that is not a dead letter
// says what state it is in, beside the tasks it did act on.
func TestDLQActionSaysTheState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := tempStore(t)
	_, out, _ := gritExec(t, dir, "run", "--json", "--store", st, example("poison.yaml"))
	tasks := byName(decodeSummary(t, out))
	dead, done := itoa(tasks["settle-m42"].ID), itoa(tasks["settle-m41"].ID)
	for _, a := range []string{"replay", "skip", "fail"} {
		code, _, errOut := gritExec(t, dir, "dlq", a, done, "--store", st)
		if want := "grit: task " + done + ": " + a + " needs a DEAD_LETTER task; it is SUCCESS\n"; code != exitUsage || errOut != want {
			t.Errorf("dlq %s of a SUCCESS task: exit %d, %q; want 2, %q", a, code, errOut, want)
		}
	}
	code, out, errOut := gritExec(t, dir, "dlq", "skip", dead, done, "--store", st)
	if code != exitUsage || out != "task "+dead+": SKIPPED\n" || !strings.Contains(errOut, "it is SUCCESS") {
		t.Errorf("dlq skip of a dead letter and a SUCCESS task: exit %d, %q, %q", code, out, errOut)
	}
}

// TestDeadLetterIsLogged: the worker that dead-letters a task says so in
// its log, at ERROR, with the task, its kind, attempt and fingerprint.
func TestDeadLetterIsLogged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := tempStore(t)
	_, out, errOut := gritExec(t, dir, "run", "--json", "--log-format", "json", "--store", st, example("poison.yaml"))
	dead := byName(decodeSummary(t, out))["settle-m42"]
	var logged map[string]any
	for _, line := range strings.Split(errOut, "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && strings.HasPrefix(fmt.Sprint(l["msg"]), "task dead-lettered") {
			if logged != nil {
				t.Errorf("a second dead-letter line: %s", line)
			}
			logged = l
		}
	}
	if logged == nil {
		t.Fatalf("no log line for the dead letter; stderr:\n%s", errOut)
	}
	if logged["level"] != "ERROR" || logged["task"] != float64(dead.ID) || logged["kind"] != dead.Kind ||
		logged["attempt"] != float64(2) || logged["fingerprint"] == "" || logged["err"] == "" {
		t.Errorf("the dead letter's line is %v, want ERROR with task %d, kind %s, attempt 2, its fingerprint and error", logged, dead.ID, dead.Kind)
	}
}
