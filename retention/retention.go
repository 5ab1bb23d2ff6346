// Package retention says how long grit keeps what has finished, so that a
// store that runs for months stops growing: finished tasks (with their
// attempts, and their runs once a run's last task goes) and the rows of
// workers long gone. Every worker prunes a bounded batch at a time (see
// the store's pruning); there is no leader.
package retention

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/grit-run/grit/task"
)

// Forever keeps what a rule names.
const Forever time.Duration = -1

// Policy is how long each finished state is kept, for every queue, and
// for queues of their own.
type Policy struct {
	// Keep is how long tasks that finished in a state are kept; a state
	// absent is kept forever, as is one set to Forever. DEAD_LETTER is
	// never pruned: an operator ends it.
	Keep map[task.State]time.Duration
	// Queues overrides Keep for a queue's tasks, state by state.
	Queues map[string]map[task.State]time.Duration
	// Workers is how long the row of a worker that stopped (or went
	// silent) is kept; Forever or 0 keeps them.
	Workers time.Duration
	// Off turns pruning off.
	Off bool
}

// Default keeps SUCCESS and CANCELLED tasks a day, FAILED,
// UPSTREAM_FAILED and SKIPPED a week, dead letters until an operator acts,
// and a stopped worker's row a day.
func Default() Policy {
	return Policy{
		Keep: map[task.State]time.Duration{
			task.Success: 24 * time.Hour, task.Cancelled: 24 * time.Hour,
			task.Failed: 7 * 24 * time.Hour, task.UpstreamFailed: 7 * 24 * time.Hour, task.Skipped: 7 * 24 * time.Hour,
		},
		Workers: 24 * time.Hour,
	}
}

// OrDefault is p, or Default when p is the zero Policy (nothing said).
func (p Policy) OrDefault() Policy {
	if p.Keep == nil && p.Queues == nil && p.Workers == 0 && !p.Off {
		return Default()
	}
	return p
}

// states are the prunable states, in the order String writes them.
var states = []task.State{task.Success, task.Cancelled, task.Failed, task.UpstreamFailed, task.Skipped}

// Rule keeps the finished tasks of a state (and, when Queue is set, of a
// queue) for Keep after they finished; then a prune deletes them. A rule
// with a Queue wins over the rule without one for the same state.
type Rule struct {
	Queue string // "" for every queue without a rule of its own for State
	State task.State
	Keep  time.Duration // > 0
}

// Validate says what is wrong with r, if anything: only finished states
// other than DEAD_LETTER are pruned, for a positive time.
func (r Rule) Validate() error {
	switch {
	case r.State == task.DeadLetter:
		return fmt.Errorf("DEAD_LETTER tasks wait for an operator: replay, skip or fail them: %w", task.ErrInvalid)
	case !r.State.Terminal():
		return fmt.Errorf("state %s: only finished tasks are pruned (SUCCESS, FAILED, CANCELLED, SKIPPED, UPSTREAM_FAILED): %w", r.State, task.ErrInvalid)
	case r.Keep <= 0:
		return fmt.Errorf("keep %v for %s: want a positive duration: %w", r.Keep, r.State, task.ErrInvalid)
	case len(r.Queue) > 200:
		return fmt.Errorf("queue %q: want a name of at most 200 characters: %w", r.Queue, task.ErrInvalid)
	}
	return nil
}

// Rules are p's rules, one for each state (and queue) whose tasks go
// after a time; a state without one is kept forever.
func (p Policy) Rules() []Rule {
	var rules []Rule
	for _, s := range states {
		if d, ok := p.Keep[s]; ok && d > 0 {
			rules = append(rules, Rule{State: s, Keep: d})
		}
	}
	for _, q := range slices.Sorted(maps.Keys(p.Queues)) {
		for _, s := range states {
			d, ok := p.Queues[q][s]
			switch {
			case !ok:
			case d > 0:
				rules = append(rules, Rule{Queue: q, State: s, Keep: d})
			case d == Forever:
				// A queue kept forever in a state: a rule that never comes.
				rules = append(rules, Rule{Queue: q, State: s, Keep: neverKeep})
			}
		}
	}
	return rules
}

// neverKeep stands for Forever in a queue's rule, which must outrank the
// rule without a queue: a hundred years.
const neverKeep = 100 * 365 * 24 * time.Hour

// ErrParse is wrapped by Parse's errors.
var ErrParse = errors.New("retention")

const example = `e.g. "success=24h,failed=7d,mail/success=1h,workers=24h", or off`

// Parse reads a policy: "off", or comma-separated STATE=DURATION,
// QUEUE/STATE=DURATION and workers=DURATION, over Default: a state not
// named keeps its default. A duration is a Go duration or a number of
// days (7d), or forever.
func Parse(s string) (Policy, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return Policy{Off: true}, nil
	}
	p := Default()
	if s == "" {
		return p, nil
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		key, val, ok := strings.Cut(item, "=")
		if !ok || key == "" {
			return Policy{}, fmt.Errorf("%w %q: %q is not KEY=DURATION (%s)", ErrParse, s, item, example)
		}
		d, err := parseDuration(val)
		if err != nil {
			return Policy{}, fmt.Errorf("%w %q: %s: %v (%s)", ErrParse, s, key, err, example)
		}
		if strings.EqualFold(key, "workers") {
			p.Workers = d
			continue
		}
		queue, state, hasQueue := strings.Cut(key, "/")
		if !hasQueue {
			queue, state = "", key
		}
		st, err := parseState(state)
		if err != nil {
			return Policy{}, fmt.Errorf("%w %q: %v (%s)", ErrParse, s, err, example)
		}
		if !hasQueue {
			p.Keep[st] = d
			continue
		}
		if queue == "" || len(queue) > 200 {
			return Policy{}, fmt.Errorf("%w %q: %q: want a queue name of 1 to 200 characters before the / (%s)", ErrParse, s, key, example)
		}
		if p.Queues == nil {
			p.Queues = map[string]map[task.State]time.Duration{}
		}
		if p.Queues[queue] == nil {
			p.Queues[queue] = map[task.State]time.Duration{}
		}
		p.Queues[queue][st] = d
	}
	return p, nil
}

func parseState(s string) (task.State, error) {
	st := task.State(strings.ToUpper(strings.TrimSpace(s)))
	if st == task.DeadLetter {
		return "", fmt.Errorf("dead_letter: dead letters are kept until an operator replays, skips or fails them")
	}
	if !slices.Contains(states, st) {
		return "", fmt.Errorf("%q is not a finished state: want success, cancelled, failed, upstream_failed or skipped", s)
	}
	return st, nil
}

// parseDuration reads a Go duration, a number of days (7d) or forever.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "forever") {
		return Forever, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 || days > 100*365 {
			return 0, fmt.Errorf("%q: want a whole number of days from 1 (7d), a Go duration (36h) or forever", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a positive duration (24h, 7d) or forever", s)
	}
	return d, nil
}

// String writes p back as Parse reads it: every state, then the queues'.
func (p Policy) String() string {
	if p.Off {
		return "off"
	}
	var parts []string
	for _, s := range states {
		if d, ok := p.Keep[s]; ok {
			parts = append(parts, strings.ToLower(string(s))+"="+formatDuration(d))
		} else {
			parts = append(parts, strings.ToLower(string(s))+"=forever")
		}
	}
	for _, q := range slices.Sorted(maps.Keys(p.Queues)) {
		for _, s := range states {
			if d, ok := p.Queues[q][s]; ok {
				parts = append(parts, q+"/"+strings.ToLower(string(s))+"="+formatDuration(d))
			}
		}
	}
	if p.Workers > 0 {
		parts = append(parts, "workers="+formatDuration(p.Workers))
	} else {
		parts = append(parts, "workers=forever")
	}
	return strings.Join(parts, ",")
}

func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "forever"
	case d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return d.String()
}
