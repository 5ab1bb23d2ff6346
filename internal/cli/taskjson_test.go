package cli

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/grit-run/grit/task"
)

// kindOf is the JSON type of a value: null, string, number, bool, object
// or array.
func kindOf(raw json.RawMessage) string {
	switch s := strings.TrimSpace(string(raw)); {
	case s == "null":
		return "null"
	case strings.HasPrefix(s, `"`):
		return "string"
	case strings.HasPrefix(s, "{"):
		return "object"
	case strings.HasPrefix(s, "["):
		return "array"
	case s == "true" || s == "false":
		return "bool"
	}
	return "number"
}

// nullable are the task keys that may be null, with their type otherwise
// ("" for args, which are any JSON).
var nullable = map[string]string{
	"run_id": "number", "args": "", "next_at": "string", "lease_expires": "string",
	"created_at": "string", "first_started_at": "string", "finished_at": "string", "result": "",
}

// checkShape fails unless obj has exactly the keys of taskJSON, each of
// the type taskJSON gives it.
func checkShape(t *testing.T, where string, obj json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var want, got map[string]json.RawMessage
	ref, _ := json.Marshal(taskView(task.Task{ID: 1, State: task.Ready}))
	json.Unmarshal(ref, &want)
	if err := json.Unmarshal(obj, &got); err != nil {
		t.Fatalf("%s: not a JSON object: %v: %s", where, err, obj)
	}
	if k1, k2 := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(k1, k2) {
		t.Errorf("%s: keys %v, want %v", where, k1, k2)
	}
	for k, v := range got {
		kind := kindOf(v)
		if other, ok := nullable[k]; ok {
			if kind != "null" && other != "" && kind != other {
				t.Errorf("%s: %s is %s %s, want null or %s", where, k, kind, v, other)
			}
			continue
		}
		if w := kindOf(want[k]); kind != w {
			t.Errorf("%s: %s is %s %s, want %s", where, k, kind, v, w)
		}
	}
	return got
}

// normal is a JSON value with its objects' keys in order.
func normal(raw json.RawMessage) json.RawMessage {
	var v any
	json.Unmarshal(raw, &v)
	b, _ := json.Marshal(v)
	return b
}

// TestOneTaskShape: every command that prints a task prints it in one
// shape, from the store or through a server: the same keys, of the same
// types, the same values for the same task.
func TestOneTaskShape(t *testing.T) {
	t.Parallel()
	st := tempStore(t)
	_, out, _ := grit(t, "run", "--json", "--store", st, example("poison.yaml"))
	var summary struct {
		Run   int64
		Tasks []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &summary); err != nil {
		t.Fatalf("run --json: %v: %s", err, out)
	}
	dead := byName(decodeSummary(t, out))["settle-m42"]
	id := itoa(dead.ID)
	seen := map[string]json.RawMessage{} // the dead letter, as each command printed it
	for _, obj := range summary.Tasks {
		if got := checkShape(t, "run", obj); string(got["id"]) == id {
			seen["run"] = normal(obj)
		}
	}
	pick := func(cmd string, out string, path func(any) any) {
		t.Helper()
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%s: %v: %s", cmd, err, out)
		}
		b, _ := json.Marshal(path(v))
		checkShape(t, cmd, b)
		seen[cmd] = b
	}
	first := func(v any) any { return v.([]any)[0] }
	_, out, _ = grit(t, "wait", "--json", "--store", st, itoa(summary.Run))
	pick("wait", out, func(v any) any {
		for _, tk := range v.(map[string]any)["tasks"].([]any) {
			if tk.(map[string]any)["name"] == "settle-m42" {
				return tk
			}
		}
		return nil
	})
	_, out, _ = grit(t, "tasks", "--json", "--state", "DEAD_LETTER", "--store", st)
	pick("tasks", out, first)
	_, out, _ = grit(t, "task", id, "--json", "--store", st)
	pick("task", out, func(v any) any { return v.(map[string]any)["task"] })
	_, out, _ = grit(t, "dlq", "list", "--json", "--store", st)
	pick("dlq list", out, func(v any) any { return first(v).(map[string]any)["tasks"].([]any)[0] })

	addr, stop := startServer(t, st)
	defer stop()
	_, out, _ = grit(t, "get", id, "--json", "--server", addr)
	pick("get", out, func(v any) any { return v })
	for cmd, obj := range seen {
		if string(obj) != string(seen["tasks"]) {
			t.Errorf("%s printed the dead letter\n%s\ngrit tasks\n%s", cmd, obj, seen["tasks"])
		}
	}

	_, out, _ = grit(t, "dlq", "replay", id, "--json", "--store", st)
	pick("dlq replay", out, first)
	_, out, _ = grit(t, "enqueue", "--kind", "email.send", "--args", `{"to": "a@example.com", "n": 7}`, "--json", "--server", addr)
	pick("enqueue", out, func(v any) any {
		m := v.(map[string]any)
		if m["existed"] != false {
			t.Errorf("enqueue --json: existed is %v, want false for a task this call created", m["existed"])
		}
		delete(m, "existed") // the one key enqueue adds to a task's
		return m
	})
	var enq struct {
		ID   int64
		Args map[string]any
	}
	json.Unmarshal(seen["enqueue"], &enq)
	if enq.ID == 0 || enq.Args["n"] != 7.0 {
		t.Errorf("enqueue --json: %s; want a numeric id and the args as JSON", seen["enqueue"])
	}
	_, out, _ = grit(t, "cancel", itoa(enq.ID), "--json", "--server", addr)
	pick("cancel", out, func(v any) any { return v })
	_, out, _ = grit(t, "tasks", "--json", "--kind", "email.send", "--store", st)
	pick("tasks after cancel", out, first)
	if seen["cancel"] == nil || string(seen["cancel"]) != string(seen["tasks after cancel"]) {
		t.Errorf("cancel printed\n%s\ngrit tasks\n%s", seen["cancel"], seen["tasks after cancel"])
	}
}
