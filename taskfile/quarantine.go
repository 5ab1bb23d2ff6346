package taskfile

import (
	"go.yaml.in/yaml/v3"

	"github.com/grit-run/grit/task"
)

// quarantineKeys are a quarantine mapping's keys, in the order the docs
// list them.
var quarantineKeys = []string{"kind", "max", "max_share"}

// quarantine reads a task's quarantine policy: the kind its quarantined
// items replay as, and how many it tolerates.
func (p *parser) quarantine(n *yaml.Node) (task.ExecQuarantine, bool) {
	var q task.ExecQuarantine
	if n.Kind != yaml.MappingNode {
		p.errs.add(n.Line, "quarantine is %s (it takes a mapping, e.g. {kind: import-row, max: 10})", describe(n))
		return q, false
	}
	ok := true
	for _, kv := range p.fields(n, "key") {
		v, good := kv.val, false
		switch key := kv.key.Value; key {
		case "kind":
			q.Kind, good = p.name(key, v)
			if good && q.Kind == task.KindExec {
				p.errs.add(v.Line, "quarantine kind %q is the kind of process tasks (name the kind of a Go handler or remote worker that takes one item as its args)", q.Kind)
				good = false
			}
		case "max":
			q.Max, good = p.integer(key, v, 0, maxInt32, "a whole number: how many items the task may set aside and still succeed; 0 for no bound")
		case "max_share":
			q.MaxShare, good = p.number(key, v, "a share from 0 to 1 of the items the task reports it saw, e.g. 0.01; 0 for no bound")
			if good && (q.MaxShare < 0 || q.MaxShare > 1) {
				p.errs.add(v.Line, "max_share %s is out of range (it takes a share from 0 to 1, e.g. 0.01)", v.Value)
				good = false
			}
		default:
			p.unknownKey(kv.key, quarantineKeys, nil, "a quarantine mapping's keys")
			good = true
		}
		ok = ok && good
	}
	return q, ok
}
