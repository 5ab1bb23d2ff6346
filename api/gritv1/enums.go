package gritv1

import (
	"strings"

	"github.com/grit-run/grit/task"
)

// The store keeps states, outcomes, error classes and decisions as words
// ("SUCCESS", "transient", "retry"); the API's enums are the same words in
// upper case behind the enum's prefix (TASK_STATE_SUCCESS). The functions
// below are the one mapping each way, used by the server and by clients
// that turn answers back into grit's types, so the two sides cannot drift;
// enums_test.go checks that every word grit has has its value. A word
// without a value maps to the enum's UNSPECIFIED, and UNSPECIFIED (or a
// value from a newer server) to "": a store newer than this code never
// makes an answer fail.

// TaskStateOf is s as the API sends it.
func TaskStateOf(s task.State) TaskState {
	return TaskState(valueOf(TaskState_value, "TASK_STATE_", string(s)))
}

// Task is s as grit's task package spells it; "" for UNSPECIFIED.
func (s TaskState) Task() task.State {
	return task.State(wordOf(TaskState_name, "TASK_STATE_", int32(s)))
}

// AttemptOutcomeOf is o as the API sends it.
func AttemptOutcomeOf(o task.Outcome) AttemptOutcome {
	return AttemptOutcome(valueOf(AttemptOutcome_value, "ATTEMPT_OUTCOME_", string(o)))
}

// Task is o as grit's task package spells it; "" for UNSPECIFIED.
func (o AttemptOutcome) Task() task.Outcome {
	return task.Outcome(wordOf(AttemptOutcome_name, "ATTEMPT_OUTCOME_", int32(o)))
}

// InstanceOutcomeOf is how an event sent to a state machine's instance
// ended, as the store keeps it (e.g. "ENTERED"), as the API sends it.
func InstanceOutcomeOf(outcome string) InstanceOutcome {
	return InstanceOutcome(valueOf(InstanceOutcome_value, "INSTANCE_OUTCOME_", outcome))
}

// ErrorClassOf is an attempt's class, as the store keeps it
// (task.Attempt.Class, e.g. "transient"), as the API sends it.
func ErrorClassOf(class string) ErrorClass {
	return ErrorClass(valueOf(ErrorClass_value, "ERROR_CLASS_", class))
}

// Word is c as an attempt's class is kept (e.g. "transient"); "" for
// UNSPECIFIED.
func (c ErrorClass) Word() string {
	return strings.ToLower(wordOf(ErrorClass_name, "ERROR_CLASS_", int32(c)))
}

// DecisionOf is an attempt's decision, as the store keeps it
// (task.Attempt.Decision, e.g. "retry"), as the API sends it.
func DecisionOf(decision string) Decision {
	return Decision(valueOf(Decision_value, "DECISION_", decision))
}

// Word is d as an attempt's decision is kept (e.g. "retry"); "" for
// UNSPECIFIED.
func (d Decision) Word() string {
	return strings.ToLower(wordOf(Decision_name, "DECISION_", int32(d)))
}

func valueOf(values map[string]int32, prefix, word string) int32 {
	if word == "" {
		return 0
	}
	return values[prefix+strings.ToUpper(word)] // 0, UNSPECIFIED, when missing
}

func wordOf(names map[int32]string, prefix string, v int32) string {
	if v == 0 {
		return ""
	}
	return strings.TrimPrefix(names[v], prefix) // "" for a value this code does not know
}
