package retry

import (
	"fmt"
	"runtime"
	"strings"
)

// PanicError is a recovered panic as an error, with the frame where it
// happened. Make one with Recovered inside the deferred function that calls
// recover.
type PanicError struct {
	Value any           // what was passed to panic
	Frame runtime.Frame // the innermost frame outside the runtime
	pcs   []uintptr
}

// Recovered turns a value returned by recover into a *PanicError. Call it in
// the deferred function itself, so that the panicking stack is still there:
//
//	defer func() {
//		if v := recover(); v != nil {
//			err = retry.Recovered(v)
//		}
//	}()
//
// Recovered(nil) is nil.
func Recovered(v any) *PanicError {
	if v == nil {
		return nil
	}
	pcs := make([]uintptr, 64)
	pcs = pcs[:runtime.Callers(2, pcs)]
	return &PanicError{Value: v, Frame: panicFrame(pcs), pcs: pcs}
}

// panicFrame finds the frame that panicked: the first frame below
// runtime.gopanic that is not in the runtime. Without a gopanic frame (the
// caller was not panicking) it is the first frame outside the runtime.
func panicFrame(pcs []uintptr) runtime.Frame {
	var first runtime.Frame
	seenPanic := false
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function == "runtime.gopanic" {
			seenPanic = true
		} else if !strings.HasPrefix(f.Function, "runtime.") {
			if seenPanic {
				return f
			}
			if first.Function == "" {
				first = f
			}
		}
		if !more {
			return first
		}
	}
}

func (p *PanicError) Error() string {
	return fmt.Sprintf("panic: %v [recovered at %s %s:%d]", p.Value, p.Frame.Function, p.Frame.File, p.Frame.Line)
}

// Unwrap returns the panic value when it was an error (panic(err)).
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Stack returns the stack of the panic, one "function\n\tfile:line" pair per
// frame, for logs.
func (p *PanicError) Stack() string {
	var b strings.Builder
	frames := runtime.CallersFrames(p.pcs)
	for {
		f, more := frames.Next()
		fmt.Fprintf(&b, "%s\n\t%s:%d\n", f.Function, f.File, f.Line)
		if !more {
			return b.String()
		}
	}
}
