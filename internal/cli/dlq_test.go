package cli

import (
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
