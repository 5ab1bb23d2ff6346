package proc

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Defaults used for zero fields of a [Spec].
const (
	DefaultGrace     = 5 * time.Second
	DefaultTailBytes = 4096
)

// ErrInvalidSpec is matched by every error [Run] returns for a malformed
// [Spec].
var ErrInvalidSpec = errors.New("proc: invalid spec")

// ErrKill, as the cause of the context that ends a [Run] (matched with
// errors.Is), kills the group at once, with no SIGTERM and no grace: the
// attempt is no longer the caller's to finish (its lease was lost, and
// another worker may already be running it).
var ErrKill = errors.New("proc: kill at once")

// Spec describes one attempt of a process task. Exactly one of Argv and
// Shell is set; zero values of the other fields mean documented defaults.
type Spec struct {
	// Argv is the command and its arguments, run without a shell. Argv[0] is
	// looked up in the worker's PATH unless it contains a slash.
	Argv []string
	// Shell is a script run with "/bin/sh -c".
	Shell string
	// Env holds KEY=VALUE entries added on top of the worker's environment;
	// a later entry wins over an earlier one and over the worker's.
	Env []string
	// Dir is the working directory; "" means the worker's.
	Dir string
	// Grace is how long the leader has to exit after SIGTERM before the group
	// gets SIGKILL; 0 means DefaultGrace.
	Grace time.Duration
	// TailBytes is how many bytes of stdout, and of stderr, the Result keeps;
	// 0 means DefaultTailBytes.
	TailBytes int
	// Stdout and Stderr, when set, receive a live copy of the output. They
	// are never called concurrently, and one that fails is dropped; one that
	// blocks holds Run up, as it holds up the draining of the pipe.
	Stdout, Stderr io.Writer
}

func (s Spec) validate() error {
	switch {
	case len(s.Argv) == 0 && s.Shell == "":
		return fmt.Errorf("%w: set Argv or Shell", ErrInvalidSpec)
	case len(s.Argv) > 0 && s.Shell != "":
		return fmt.Errorf("%w: set Argv or Shell, not both", ErrInvalidSpec)
	case len(s.Argv) > 0 && s.Argv[0] == "":
		return fmt.Errorf("%w: Argv[0] is empty", ErrInvalidSpec)
	case s.Grace < 0:
		return fmt.Errorf("%w: Grace %v is negative", ErrInvalidSpec, s.Grace)
	case s.TailBytes < 0:
		return fmt.Errorf("%w: TailBytes %d is negative", ErrInvalidSpec, s.TailBytes)
	}
	for i, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("%w: Env[%d] %q is not KEY=VALUE", ErrInvalidSpec, i, kv)
		}
	}
	return nil
}

func (s Spec) grace() time.Duration {
	if s.Grace == 0 {
		return DefaultGrace
	}
	return s.Grace
}

func (s Spec) tailBytes() int {
	if s.TailBytes == 0 {
		return DefaultTailBytes
	}
	return s.TailBytes
}

// label names the command in errors: the quoted program, or the start of the
// script.
func (s Spec) label() string {
	if s.Shell == "" {
		return strconv.Quote(s.Argv[0])
	}
	const max = 60
	script := s.Shell
	if r := []rune(script); len(r) > max {
		script = string(r[:max]) + "…"
	}
	return "sh -c " + strconv.Quote(script)
}
