package taskfile

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/grit-run/grit/internal/suggest"
)

// unknownKey reports a key that is not one of known, suggesting the closest
// known key (or the synonym's) when there is one; otherwise listing them
// under the title what ("a task's keys").
func (p *parser) unknownKey(k *yaml.Node, known []string, synonyms map[string]string, what string) {
	if s, ok := synonyms[k.Value]; ok {
		p.errs.add(k.Line, "unknown key %q (did you mean %q?)", k.Value, s)
		return
	}
	if s, ok := suggest.Closest(k.Value, known); ok {
		p.errs.add(k.Line, "unknown key %q (did you mean %q?)", k.Value, s)
		return
	}
	p.errs.add(k.Line, "unknown key %q (%s are %s)", k.Value, what, strings.Join(known, ", "))
}
