package task

import "time"

// KindExec is the kind of process tasks: their Args are an Exec.
const KindExec = "exec"

// DefaultSnooze is how long a process task that snoozes (an exit code in
// Exec.SnoozeOnExit) waits before it is run again, when neither its
// Exec.Snooze nor the process (through its snooze file) says otherwise.
const DefaultSnooze = time.Minute

// Exec is the Args of a process task (kind "exec"), as JSON.
type Exec struct {
	Argv  []string `json:"argv,omitempty"`  // run without a shell
	Shell string   `json:"shell,omitempty"` // run with sh -c
	Env   []string `json:"env,omitempty"`   // KEY=VALUE on top of the worker's environment
	Dir   string   `json:"dir,omitempty"`
	// RetryOnExit lists exit codes that are transient (75, EX_TEMPFAIL,
	// always is); PermanentOnExit those that are permanent. Any other
	// non-zero exit is unclassified: retried and checked for poison.
	RetryOnExit     []int `json:"retry_on_exit,omitempty"`
	PermanentOnExit []int `json:"permanent_on_exit,omitempty"`
	// ResourceOnExit lists exit codes that mean resource pressure.
	ResourceOnExit []int `json:"resource_on_exit,omitempty"`
	// SnoozeOnExit lists exit codes that mean "not yet": the task snoozes
	// (SENSING) as a Go handler's grit.Snooze does, using no attempt, and
	// runs again after Snooze, or after the delay the process wrote to
	// the file named by GRIT_SNOOZE_FILE.
	SnoozeOnExit []int `json:"snooze_on_exit,omitempty"`
	// Snooze is the delay of a snooze; 0 is DefaultSnooze.
	Snooze time.Duration `json:"snooze,omitempty"`
	// MaxSnoozes bounds the task's snoozes: the snooze after the last one
	// fails the task instead. 0 is no bound.
	MaxSnoozes int `json:"max_snoozes,omitempty"`
	// Quarantine is what the task does with the items its process sets
	// aside, by writing them to the file named in GRIT_QUARANTINE_FILE.
	Quarantine *ExecQuarantine `json:"quarantine,omitempty"`
}

// ExecQuarantine is a process task's quarantine policy: the kind its
// items replay as, and how many it tolerates (a count, or a share of
// the items it reported it saw); zero, no bound.
type ExecQuarantine struct {
	Kind     string  `json:"kind,omitempty"`
	Max      int     `json:"max,omitempty"`
	MaxShare float64 `json:"max_share,omitempty"`
}
