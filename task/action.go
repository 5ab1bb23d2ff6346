package task

// Action is an operator's action on a task.
type Action string

const (
	ActReplay Action = "replay" // DEAD_LETTER -> READY, streak reset, attempts kept
	ActSkip   Action = "skip"   // DEAD_LETTER -> SKIPPED, dependents go on
	ActFail   Action = "fail"   // DEAD_LETTER -> FAILED, dependents UPSTREAM_FAILED
	ActCancel Action = "cancel" // a task not ended -> CANCELLED, dependents CANCELLED
	// ActRetry runs a FAILED or CANCELLED task again, with all its
	// attempts (and deferrals) anew: READY now. Only a task outside any
	// run: a run's tasks are retried with their run (its dependents and
	// its state would have to be undone), and refusing one is a
	// *StateError that says so.
	ActRetry Action = "retry"
)
