package task

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrInvalid)
}

// Validate says what is wrong with t, if anything, before it is
// inserted (the store checks it too).
func (t NewTask) Validate() error {
	switch {
	case t.Kind == "":
		return invalidf("task %q: no kind", t.Name)
	case TimeoutProblem(t.Timeout) != "":
		return invalidf("task %q: timeout %s", t.Name, TimeoutProblem(t.Timeout))
	case GraceProblem(t.Grace) != "":
		return invalidf("task %q: grace %s", t.Name, GraceProblem(t.Grace))
	case t.PoisonAfter < 0:
		return invalidf("task %q: negative poison_after", t.Name)
	case strings.HasPrefix(t.Group, "kind:"):
		return invalidf("task %q: group %q: names starting with \"kind:\" are the holds of kinds in an outage: choose another group name", t.Name, t.Group)
	case len(t.Tenant) > 200:
		return invalidf("task %q: tenant of %d characters: want at most 200", t.Name, len(t.Tenant))
	}
	if p := JSONProblem(t.Args); p != "" {
		return invalidf("task %q: args: %s", t.Name, p)
	}
	return nil
}

// JSONProblem says what is wrong with a task's args or an event's payload,
// or "" when nothing is: they are empty, or JSON in valid UTF-8, which
// every reader of them (the CLI's --json, the API, a worker in another
// language) can parse.
func JSONProblem(b []byte) string {
	switch {
	case len(b) == 0:
		return ""
	case !utf8.Valid(b):
		return fmt.Sprintf("not valid UTF-8 (at byte %d): send JSON text in UTF-8, with binary data base64-encoded in a string", invalidAt(b))
	case !json.Valid(b):
		var v any
		err := json.Unmarshal(b, &v)
		return fmt.Sprintf("not JSON (%v): send JSON, e.g. {\"to\":\"a@example.com\"}", err)
	}
	return ""
}

// invalidAt is the offset of b's first byte that is not valid UTF-8.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}
