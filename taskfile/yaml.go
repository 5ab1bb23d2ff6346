package taskfile

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decodeYAML reads the one YAML document of a task file. It returns nil
// after reporting a syntax error, an empty file or a second document.
func decodeYAML(data []byte, errs *errList) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			errs.add(1, "the file is empty (a task file is a mapping with name: and tasks:)")
		} else {
			syntaxError(data, err, errs)
		}
		return nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		line := next.Line
		if err != nil {
			line, _ = yamlErrorLine(data, err)
		}
		errs.add(line, "the file holds more than one YAML document (keep one: remove the --- line and what follows)")
		return nil
	}
	root := doc.Content[0]
	if isNull(root) {
		errs.add(1, "the file is empty (a task file is a mapping with name: and tasks:)")
		return nil
	}
	return root
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// parserProblems are the messages of yaml's parser (as opposed to its
// scanner). yaml reports the line of a parser error 0-based, one line early.
var parserProblems = []string{
	"did not find expected",
	"found duplicate %",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// syntaxError reports a YAML error with its line.
func syntaxError(data []byte, err error, errs *errList) {
	line, msg := yamlErrorLine(data, err)
	hint := "fix the YAML syntax"
	if strings.Contains(msg, "cannot start any token") && bytes.ContainsRune(data, '\t') {
		hint = "YAML indents with spaces, never tabs"
	}
	errs.add(line, "bad YAML: %s (%s)", msg, hint)
}

// yamlErrorLine splits a yaml error into its 1-based line and its message.
func yamlErrorLine(data []byte, err error) (int, string) {
	msg := err.Error()
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		msg = strings.TrimPrefix(msg, "yaml: ")
		if name, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
			name, _, _ = strings.Cut(name, "'")
			return anchorLine(data, name), msg
		}
		return 1, msg
	}
	line, _ := strconv.Atoi(m[1])
	msg = msg[len(m[0]):]
	for _, p := range parserProblems {
		if strings.HasPrefix(msg, p) {
			line++
			break
		}
	}
	return line, msg
}

// countLines counts lines as YAML does: \n, \r\n and \r end a line.
func countLines(data []byte) int {
	n := 1
	for i, c := range data {
		if c == '\n' || c == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
			n++
		}
	}
	return n
}

// anchorLine finds the first line that uses the alias *name, which yaml
// reports without a line.
func anchorLine(data []byte, name string) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(l, []byte("*"+name)) {
			return i + 1
		}
	}
	return 1
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names a node's kind for error messages.
func describe(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode && isNull(n):
		return "empty"
	case n.Kind == yaml.ScalarNode:
		if r := []rune(n.Value); len(r) > 40 {
			return strconv.Quote(string(r[:40]) + "…")
		}
		return strconv.Quote(n.Value)
	}
	return "an alias"
}

// pair is one key and its (resolved) value in a mapping.
type pair struct {
	key, val *yaml.Node
}

// mergeTag marks a YAML merge key (<<: *anchor).
const mergeTag = "!!merge"

// fields returns the entries of mapping n in the file's order. Keys set twice
// are reported (and the second is dropped): yaml itself does not refuse them.
// Merge keys (<<: *anchor, or a list of anchors) are expanded where they
// stand; a key written in n wins over a merged one, and an earlier merged
// mapping over a later one. what names the keys in messages ("key", "task").
func (p *parser) fields(n *yaml.Node, what string) []pair {
	// A mapping that anchors merge many times over is read once: the
	// errors are reported once, and merges of merges cannot blow up.
	if f, ok := p.read[n]; ok {
		return f
	}
	f := p.readFields(n, what)
	p.read[n] = f
	return f
}

func (p *parser) readFields(n *yaml.Node, what string) []pair {
	own := make(map[string]*yaml.Node) // key -> its first key node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == mergeTag {
			continue
		}
		if first, ok := own[k.Value]; ok {
			hint := "keep one"
			if what == "task" || what == "schedule" {
				hint = "rename or remove one"
			}
			p.errs.add(k.Line, "%s %q is defined twice, at lines %d and %d (%s)", what, k.Value, first.Line, k.Line, hint)
			continue
		}
		own[k.Value] = k
	}
	var out []pair
	added := make(map[string]bool, len(own))
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		switch {
		case k.Kind != yaml.ScalarNode:
			p.errs.add(k.Line, "a key is %s (a key is a plain name, such as timeout)", describe(resolve(k)))
		case k.ShortTag() == mergeTag:
			for _, m := range p.merged(k, v) {
				if own[m.key.Value] == nil && !added[m.key.Value] {
					added[m.key.Value] = true
					out = append(out, m)
				}
			}
		case own[k.Value] == k:
			added[k.Value] = true
			out = append(out, pair{k, v})
		}
	}
	return out
}

// merged returns the entries the merge key k brings in.
func (p *parser) merged(k, v *yaml.Node) []pair {
	maps := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		maps = maps[:0]
		for _, m := range v.Content {
			maps = append(maps, resolve(m))
		}
	}
	var out []pair
	seen := make(map[string]bool)
	for _, m := range maps {
		if m.Kind != yaml.MappingNode {
			p.errs.add(m.Line, "<< merges %s (merge a mapping: <<: *anchor, or a list of them)", describe(m))
			continue
		}
		if p.merging[m] {
			p.errs.add(k.Line, "this mapping merges itself (remove the << that names it)")
			continue
		}
		p.merging[m] = true
		for _, f := range p.fields(m, "key") {
			if !seen[f.key.Value] {
				seen[f.key.Value] = true
				out = append(out, f)
			}
		}
		delete(p.merging, m)
	}
	return out
}
