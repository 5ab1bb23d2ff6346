package gritv1

import (
	"testing"

	"github.com/grit-run/grit/fsm"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/task"
)

// Every word grit keeps has its enum value and comes back from it, and
// every enum value but UNSPECIFIED is one of grit's words: a state, class
// or decision added on one side without the other fails here.
func TestEnumsMatchGritsWords(t *testing.T) {
	t.Parallel()
	for _, s := range task.States {
		if v := TaskStateOf(s); v == TaskState_TASK_STATE_UNSPECIFIED || v.Task() != s {
			t.Errorf("state %s: enum %v, back %q", s, v, v.Task())
		}
	}
	if got, want := len(TaskState_name)-1, len(task.States); got != want {
		t.Errorf("TaskState has %d values besides UNSPECIFIED, grit has %d states", got, want)
	}

	outcomes := []task.Outcome{task.OutcomeRunning, task.OutcomeSuccess, task.OutcomeError, task.OutcomeTimeout,
		task.OutcomeSnoozed, task.OutcomeInterrupted, task.OutcomeReleased}
	for _, o := range outcomes {
		if v := AttemptOutcomeOf(o); v == AttemptOutcome_ATTEMPT_OUTCOME_UNSPECIFIED || v.Task() != o {
			t.Errorf("outcome %s: enum %v, back %q", o, v, v.Task())
		}
	}
	if got, want := len(AttemptOutcome_name)-1, len(outcomes); got != want {
		t.Errorf("AttemptOutcome has %d values besides UNSPECIFIED, the test knows %d outcomes", got, want)
	}

	instance := []string{fsm.Entered, fsm.Failed, fsm.Ignored}
	for _, o := range instance {
		if v := InstanceOutcomeOf(o); v == InstanceOutcome_INSTANCE_OUTCOME_UNSPECIFIED || v.String() != "INSTANCE_OUTCOME_"+o {
			t.Errorf("instance outcome %s: enum %v", o, v)
		}
	}
	if got, want := len(InstanceOutcome_name)-1, len(instance); got != want {
		t.Errorf("InstanceOutcome has %d values besides UNSPECIFIED, grit has %d", got, want)
	}

	// An attempt's class is a retry.Class's word; TIMEOUT is only a
	// worker's (the server records it as transient).
	classes := map[string]bool{"timeout": true}
	for c := retry.Unclassified; c <= retry.ClassCanceled; c++ {
		classes[c.String()] = true
		if v := ErrorClassOf(c.String()); v == ErrorClass_ERROR_CLASS_UNSPECIFIED || v.Word() != c.String() {
			t.Errorf("class %s: enum %v, back %q", c, v, v.Word())
		}
	}
	for v := range ErrorClass_name {
		if v != 0 && !classes[ErrorClass(v).Word()] {
			t.Errorf("ErrorClass %v is not a class of grit's", ErrorClass(v))
		}
	}

	// A decision is a retry.Reason's word, or "outage" (a kind or group
	// held when many tasks fail alike).
	decisions := map[string]bool{"outage": true}
	for r := retry.ReasonRetry; r <= retry.ReasonCanceled; r++ {
		decisions[r.String()] = true
	}
	for d := range decisions {
		if v := DecisionOf(d); v == Decision_DECISION_UNSPECIFIED || v.Word() != d {
			t.Errorf("decision %s: enum %v, back %q", d, v, v.Word())
		}
	}
	if got, want := len(Decision_name)-1, len(decisions); got != want {
		t.Errorf("Decision has %d values besides UNSPECIFIED, grit has %d decisions", got, want)
	}
}

// A word this code does not know, and a value from a newer server, map to
// UNSPECIFIED and "" rather than failing.
func TestEnumsUnknown(t *testing.T) {
	t.Parallel()
	if v := TaskStateOf("PAUSED"); v != TaskState_TASK_STATE_UNSPECIFIED {
		t.Errorf("unknown state: %v, want UNSPECIFIED", v)
	}
	if v := TaskStateOf(""); v != TaskState_TASK_STATE_UNSPECIFIED {
		t.Errorf("no state: %v, want UNSPECIFIED", v)
	}
	if s := TaskState(99).Task(); s != "" {
		t.Errorf("TaskState 99: %q, want \"\"", s)
	}
	if w := Decision(99).Word(); w != "" {
		t.Errorf("Decision 99: %q, want \"\"", w)
	}
	if v := ErrorClassOf("weird"); v != ErrorClass_ERROR_CLASS_UNSPECIFIED {
		t.Errorf("unknown class: %v, want UNSPECIFIED", v)
	}
}
