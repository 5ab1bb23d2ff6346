package retry_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/grit-run/grit/retry"
)

type keyError struct{ key int }

func (e *keyError) Error() string { return fmt.Sprintf("KeyError: %d", e.key) }

func TestMask(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"KeyError: 42", "KeyError: N"},
		{`no such user "alice"`, `no such user "…"`},
		{"row 'x-1' bad", `row "…" bad`},
		{"job 6f1c2b9e-8a3d-4c1e-9f2a-1b2c3d4e5f60 failed", "job <uuid> failed"},
		{"at 2026-11-22T10:04:29.123Z: timeout", "at <time>: timeout"},
		{"at 2026-11-22 10:04:29: timeout", "at <time>: timeout"},
		{"12:00:01 retry", "<time> retry"},
		{"ptr 0xc000123abc nil", "ptr <hex> nil"},
		{"commit 4a7c1d9e failed", "commit <hex> failed"},
		{"took 1.5s", "took Ns"},
		{"plain words stay", "plain words stay"},
	}
	for _, tt := range tests {
		if got := retry.Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFingerprintAlike(t *testing.T) {
	t.Parallel()
	pairs := [][2]error{
		{&keyError{42}, &keyError{43}},
		{fmt.Errorf("settle %d: %w", 1, &keyError{1}), fmt.Errorf("settle %d: %w", 99, &keyError{2})},
		{errors.New(`user "bob" not found`), errors.New(`user "carol" not found`)},
		{&fs.PathError{Op: "open", Path: "/data/1.csv", Err: fs.ErrNotExist}, &fs.PathError{Op: "open", Path: "/data/2.csv", Err: fs.ErrNotExist}},
	}
	for _, p := range pairs {
		a, b := retry.Fingerprint(p[0]), retry.Fingerprint(p[1])
		if a != b {
			t.Errorf("%q and %q fingerprint apart: %s, %s", p[0], p[1], a, b)
		}
		if len(a) != 12 {
			t.Errorf("fingerprint %q is not 12 hex digits", a)
		}
	}
}

func TestFingerprintApart(t *testing.T) {
	t.Parallel()
	errs := []error{
		&keyError{42},
		errors.New("KeyError: 42"), // same text, another type
		fmt.Errorf("wrap: %w", &keyError{42}),
		errors.New("connection refused"),
		errors.New("connection reset"),
		&fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist},
		&fs.PathError{Op: "open", Path: "/x", Err: fs.ErrPermission},
		errors.Join(errors.New("a"), errors.New("b")),
	}
	seen := map[string]error{}
	for _, e := range errs {
		fp := retry.Fingerprint(e)
		if prev, ok := seen[fp]; ok {
			t.Errorf("%q (%T) and %q (%T) share fingerprint %s", prev, prev, e, e, fp)
		}
		seen[fp] = e
	}
	if retry.Fingerprint(nil) != "" {
		t.Error("nil has a fingerprint")
	}
}

func TestFingerprintIsStable(t *testing.T) {
	t.Parallel()
	// Fingerprints are stored and compared across processes and releases:
	// a change to the algorithm splits every stored streak, so it must be a
	// deliberate one that updates these values.
	if got := retry.Fingerprint(errors.New("boom 42")); got != "d4d6da7b38cc" {
		t.Errorf("Fingerprint(boom 42) = %q, want d4d6da7b38cc", got)
	}
	if got := retry.FingerprintExit(1, "", []byte("x 5")); got != "499cee6fdcda" {
		t.Errorf("FingerprintExit = %q, want 499cee6fdcda", got)
	}
}

// panicAt panics at one of two lines, with a message carrying a number.
func panicAt(line, n int) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = retry.Recovered(v)
		}
	}()
	if line == 1 {
		panic(fmt.Sprintf("bad row %d", n))
	}
	var m map[string]int
	m["x"] = n // assignment to a nil map: a runtime panic
	return nil
}

func TestFingerprintPanic(t *testing.T) {
	t.Parallel()
	a, b, c := panicAt(1, 1), panicAt(1, 2), panicAt(2, 3)
	var pe *retry.PanicError
	if !errors.As(a, &pe) {
		t.Fatalf("Recovered gave %T", a)
	}
	if !strings.HasSuffix(pe.Frame.Function, "retry_test.panicAt") {
		t.Errorf("panic frame %q, want panicAt", pe.Frame.Function)
	}
	if retry.Fingerprint(a) != retry.Fingerprint(b) {
		t.Error("the same panic site fingerprints apart")
	}
	if retry.Fingerprint(a) == retry.Fingerprint(c) {
		t.Error("two panic sites fingerprint alike")
	}
	if !errors.As(c, &pe) || !strings.HasSuffix(pe.Frame.Function, "retry_test.panicAt") {
		t.Errorf("runtime panic frame %q: want the user's frame, not the runtime's", pe.Frame.Function)
	}
	if !strings.Contains(pe.Stack(), "panicAt") {
		t.Error("Stack() does not show the panicking function")
	}
	if retry.Recovered(nil) != nil {
		t.Error("Recovered(nil) is not nil")
	}
}

func TestPanicOfErrorUnwraps(t *testing.T) {
	t.Parallel()
	err := func() (err error) {
		defer func() { err = retry.Recovered(recover()) }()
		panic(os.ErrClosed)
	}()
	if !errors.Is(err, os.ErrClosed) {
		t.Errorf("%v does not unwrap to the panicked error", err)
	}
}

func TestFingerprintExit(t *testing.T) {
	t.Parallel()
	a := retry.FingerprintExit(1, "", []byte("loading\nerror: row 17 is bad\n\n"))
	b := retry.FingerprintExit(1, "", []byte("error: row 99 is bad"))
	if a != b {
		t.Error("the same last stderr line with another number fingerprints apart")
	}
	for _, other := range []string{
		retry.FingerprintExit(2, "", []byte("error: row 99 is bad")),
		retry.FingerprintExit(-1, "SIGKILL", []byte("error: row 99 is bad")),
		retry.FingerprintExit(1, "", []byte("error: disk full")),
	} {
		if other == a {
			t.Error("another exit or message fingerprints alike")
		}
	}
}
