package task

// KindExec is the kind of process tasks: their Args are an Exec.
const KindExec = "exec"

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
}
