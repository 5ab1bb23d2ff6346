package retry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// The masks applied to failure messages, in order: each replaces a kind of
// noise that changes between attempts of the same failure.
var masks = []struct {
	re  *regexp.Regexp
	sub string
}{
	{regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`"), `"…"`},
	{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<uuid>"},
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b`), "<time>"},
	{regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`), "<time>"},
	{regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b`), "<hex>"},
	{regexp.MustCompile(`(?i)\b[0-9a-f]*(?:[0-9][a-f]|[a-f][0-9])[0-9a-f]*\b`), "<hex>"},
	{regexp.MustCompile(`\d+(?:\.\d+)?`), "N"},
}

// Mask replaces the parts of a failure message that vary between attempts
// of the same failure (quoted values, UUIDs, timestamps, hex, numbers) with
// placeholders, so "KeyError: 42" and "KeyError: 43" read alike.
func Mask(msg string) string {
	for _, m := range masks {
		msg = m.re.ReplaceAllString(msg, m.sub)
	}
	return msg
}

// Fingerprint returns a short stable hash of err's structure: the types of
// the errors in its chain and its masked message. Two failures of the same
// bug fingerprint alike even when their messages carry different ids; a
// *PanicError fingerprints by the frame where the panic happened. A nil
// error has the empty fingerprint.
func Fingerprint(err error) string {
	if err == nil {
		return ""
	}
	h := sha256.New()
	writeTypes(h, err)
	if p, ok := findPanic(err); ok {
		fmt.Fprintf(h, "|panic|%T|%s|%s:%d", p.Value, Mask(fmt.Sprint(p.Value)), p.Frame.Function, p.Frame.Line)
	} else {
		fmt.Fprintf(h, "|%s", Mask(err.Error()))
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

// FingerprintExit fingerprints a failed process from its exit code, the
// signal that killed it (if any, e.g. "SIGKILL") and the masked last
// non-empty line of its standard error.
func FingerprintExit(code int, signal string, stderr []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "exit|%d|%s|%s", code, signal, Mask(lastLine(stderr)))
	return hex.EncodeToString(h.Sum(nil)[:6])
}

// writeTypes writes the dynamic types of err's chain, depth first.
func writeTypes(w interface{ Write([]byte) (int, error) }, err error) {
	for err != nil {
		fmt.Fprintf(w, "%s;", typeName(err))
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			w.Write([]byte("["))
			for _, inner := range e.Unwrap() {
				writeTypes(w, inner)
			}
			w.Write([]byte("]"))
			return
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		default:
			return
		}
	}
}

func typeName(v any) string {
	t := reflect.TypeOf(v)
	prefix := ""
	for t.Kind() == reflect.Pointer {
		prefix += "*"
		t = t.Elem()
	}
	if t.PkgPath() == "" {
		return prefix + t.String()
	}
	return prefix + t.PkgPath() + "." + t.Name()
}

func findPanic(err error) (*PanicError, bool) {
	var p *PanicError
	ok := errors.As(err, &p)
	return p, ok
}

func lastLine(b []byte) string {
	b = bytes.TrimRight(b, " \t\r\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return strings.TrimSpace(string(b))
}
