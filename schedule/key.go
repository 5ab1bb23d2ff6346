package schedule

import (
	"hash/fnv"
	"strings"
	"time"
)

// keyPrefix starts the idempotency keys of schedules' tasks.
const keyPrefix = "schedule:"

// Key is the idempotency key of the task of name's slot: however many
// workers enqueue the slot, the store keeps one task for it.
func Key(name string, slot time.Time) string {
	return keyPrefix + name + "@" + slot.UTC().Format(time.RFC3339)
}

// TriggerKey is the key of a task that an operator asked for at now,
// outside the slots.
func TriggerKey(name string, now time.Time) string {
	return keyPrefix + name + "@trigger:" + now.UTC().Format(time.RFC3339Nano)
}

// ParseKey reads a key Key or TriggerKey made: the schedule's name and
// the slot (for a trigger, the time it was asked for).
func ParseKey(key string) (name string, slot time.Time, trigger, ok bool) {
	rest, ok := strings.CutPrefix(key, keyPrefix)
	if !ok {
		return "", time.Time{}, false, false
	}
	i := strings.LastIndexByte(rest, '@')
	if i < 0 {
		return "", time.Time{}, false, false
	}
	name, at := rest[:i], rest[i+1:]
	at, trigger = strings.CutPrefix(at, "trigger:")
	slot, err := time.Parse(time.RFC3339Nano, at)
	if err != nil || nameProblem(name) != "" {
		return "", time.Time{}, false, false
	}
	return name, slot, trigger, true
}

// JitterFor is the delay of name's slot for a jitter of up to j: drawn
// from the name and the slot, so every worker draws the same.
func JitterFor(name string, j time.Duration, slot time.Time) time.Duration {
	if j <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	h.Write([]byte(slot.UTC().Format(time.RFC3339Nano)))
	return time.Duration(h.Sum64()%uint64(j/time.Millisecond+1)) * time.Millisecond
}
