package decide

import (
	"errors"
	"fmt"
	"strings"
)

// ExitTempFail is EX_TEMPFAIL: a process that exits with it asks to be
// retried, and is never poison.
const ExitTempFail = 75

// ExitError is a process task's failure: a non-zero exit or a signal.
type ExitError struct {
	Code   int    // -1 when killed by a signal
	Signal string // e.g. "SIGKILL"
	Stderr []byte // the tail of standard error
}

func (e *ExitError) Error() string {
	last := lastLine(e.Stderr)
	s := fmt.Sprintf("exit status %d", e.Code)
	if e.Signal != "" {
		s = "killed by " + e.Signal
	}
	if last != "" {
		s += ": " + last
	}
	return s
}

// lastLine is the last non-blank line of b.
func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// exitDetails finds the process failure in err, if any.
func exitDetails(err error) (*ExitError, bool) {
	var e *ExitError
	ok := errors.As(err, &e)
	return e, ok
}
