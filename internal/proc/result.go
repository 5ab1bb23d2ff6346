package proc

import (
	"bytes"
	"time"
)

// Result is the outcome of an attempt that started.
type Result struct {
	// ExitCode is the leader's exit status, or -1 when a signal killed it.
	ExitCode int
	// Signal names the signal that killed the leader ("SIGKILL"), or is "".
	Signal string
	// TimedOut reports that the context ended (deadline or cancellation)
	// before the leader exited, so the kill sequence ran.
	TimedOut bool
	// Killed reports that the leader outlived its grace and got SIGKILL.
	Killed bool
	// Stdout and Stderr are the tails of the output (see Spec.TailBytes).
	Stdout, Stderr []byte
	// Duration runs from just before the start to the leader's exit.
	Duration time.Duration
	// Pid is the leader's process id, which is also its process group id.
	Pid int
}

// LastLine returns the last non-blank line of Stderr, without surrounding
// white space, or "" when there is none. It is what a failure fingerprint
// keeps of a process task's output.
func (r Result) LastLine() string {
	rest := r.Stderr
	for len(rest) > 0 {
		i := bytes.LastIndexByte(rest, '\n')
		if line := bytes.TrimSpace(rest[i+1:]); len(line) > 0 {
			return string(line)
		}
		if i < 0 {
			break
		}
		rest = rest[:i]
	}
	return ""
}
