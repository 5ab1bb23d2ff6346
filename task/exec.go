package task

import "time"

// KindExec is the kind of process tasks: their Args are an Exec.
const KindExec = "exec"

// Where a task came from (Task.Origin). A process task runs a command on
// the worker that claims it: a worker runs one that came through the API
// (or from a task file on another host) only if it allows it (grit worker
// --allow-exec); one from its own host's task files, or from code with the
// store's credentials (""), it runs by default.
const (
	// OriginAPI: enqueued through grit server's API.
	OriginAPI = "api"
	// originFile prefixes the host of a task file's tasks (FileOrigin).
	originFile = "file:"
)

// AllowAllExec, in a worker's list of the process tasks from elsewhere
// it allows (grit worker --allow-exec), allows them all.
const AllowAllExec = "*"

// FileOrigin is the Origin of the tasks of a task file submitted on host.
func FileOrigin(host string) string { return originFile + host }

// LocalOrigin reports whether origin is that of code with the store's own
// credentials ("") or of a task file submitted on host.
func LocalOrigin(origin, host string) bool { return origin == "" || origin == FileOrigin(host) }

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
