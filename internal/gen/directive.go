package gen

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/grit-run/grit/retry"
)

// The directives, as they start a line of a function's doc comment (no
// space after the slashes, as Go's own //go: directives).
const (
	retryDirective   = "//grit:retry"
	handlerDirective = "//grit:handler"
	directivePrefix  = "//grit:"
)

// Retry is what a //grit:retry directive says: a policy in retry.Parse's
// grammar and, optionally, the kind of the catch task.
type Retry struct {
	Policy string // as written, fields separated by one space
	Catch  string // "" for none
}

// retryExample is shown in the errors of //grit:retry.
const retryExample = "e.g. //grit:retry 5 1s 1m catch refund"

// ParseRetry reads the text after //grit:retry: [count] min [max]
// [option ...] [catch KIND]. Its errors say what is wrong and how to fix it.
func ParseRetry(text string) (Retry, error) {
	fields := strings.Fields(text)
	var r Retry
	for i, f := range fields {
		if f != "catch" {
			continue
		}
		if i != len(fields)-2 {
			return Retry{}, fmt.Errorf("catch takes one kind and comes last (%s)", retryExample)
		}
		r.Catch = fields[i+1]
		if err := checkKind(r.Catch); err != nil {
			return Retry{}, fmt.Errorf("catch %w", err)
		}
		fields = fields[:i]
		break
	}
	if len(fields) == 0 {
		return Retry{}, fmt.Errorf("no policy (%s)", retryExample)
	}
	r.Policy = strings.Join(fields, " ")
	if _, err := retry.Parse(r.Policy); err != nil {
		return Retry{}, err
	}
	return r, nil
}

// ParseHandler reads the text after //grit:handler: one kind.
func ParseHandler(text string) (string, error) {
	fields := strings.Fields(text)
	if len(fields) != 1 {
		return "", fmt.Errorf("want one kind (e.g. //grit:handler charge_card)")
	}
	return fields[0], checkKind(fields[0])
}

var kindRE = regexp.MustCompile(`^[A-Za-z0-9_.:/-]+$`)

// checkKind refuses a kind the CLI and the dashboard would show badly.
func checkKind(k string) error {
	if !kindRE.MatchString(k) {
		return fmt.Errorf("kind %q: want letters, digits and _ . : / - only (e.g. charge_card)", k)
	}
	return nil
}
