package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestSend: grit send keeps a message for a task, audited, and refuses,
// with exit 2 and what to fix, bad JSON, a missing task and one that
// ended.
func TestSend(t *testing.T) {
	t.Parallel()
	dsn := migratedStore(t)
	st := openStore(t, dsn)
	ctx := context.Background()
	got, err := st.Enqueue(ctx, []task.NewTask{{Kind: "refund"}, {Kind: "done"}})
	if err != nil {
		t.Fatal(err)
	}
	id, done := got[0].Task.ID, got[1].Task.ID
	claimed, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{"done"}, Limit: 1})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if _, err := st.Finish(ctx, []store.Finish{{TaskID: done, Token: claimed[0].LeaseToken, State: task.Success}}); err != nil {
		t.Fatal(err)
	}

	sid := fmt.Sprint(id)
	if code, out, errOut := grit(t, "send", "--store", dsn, sid, "approval", `{"by": "ana"}`); code != 0 || !strings.Contains(out, "kept") {
		t.Fatalf("grit send: %d %q %q", code, out, errOut)
	}
	code, out, _ := grit(t, "send", "--store", dsn, sid, "approval", "null", "--json")
	var m task.Message
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.TaskID != id || m.Topic != "approval" || string(m.Payload) != "null" {
		t.Errorf("grit send --json: %d %q", code, out)
	}
	kept, err := st.(store.Mailbox).Messages(ctx, id)
	if err != nil || len(kept) != 2 || string(kept[0].Payload) != `{"by": "ana"}` {
		t.Errorf("messages kept %+v (%v), want the two sent, oldest first", kept, err)
	}
	log, err := st.(store.Auditor).AuditLog(ctx, 0, 0)
	if err != nil || len(log) != 2 || log[0].Action != "send" || log[0].Target != "task "+sid || !strings.HasPrefix(log[0].Who, "cli ") {
		t.Errorf("audit log %+v (%v), want the two sends", log, err)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{sid, "approval", "{"}, "e.g. grit send"},
		{[]string{sid, "approval", ""}, "no JSON"},
		{[]string{sid, "", "1"}, "topic"},
		{[]string{"x", "approval", "1"}, "not a task id"},
		{[]string{fmt.Sprint(id + 100), "approval", "1"}, "no task has id"},
		{[]string{fmt.Sprint(done), "approval", "1"}, "has not ended"},
	} {
		code, _, errOut := grit(t, append([]string{"send", "--store", dsn}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("grit send %q: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
