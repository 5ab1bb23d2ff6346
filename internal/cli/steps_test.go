package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// TestTaskShowsItsSteps: grit task lists a task's recorded steps, by the
// attempt that ran each, and --json has them.
func TestTaskShowsItsSteps(t *testing.T) {
	t.Parallel()
	dsn := migratedStore(t)
	st := openStore(t, dsn)
	ctx := context.Background()
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "pay"}}); err != nil {
		t.Fatal(err)
	}
	c, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 1})
	if err != nil || len(c) != 1 {
		t.Fatal(c, err)
	}
	for i, name := range []string{"charge", "charge"} {
		if _, err := st.(store.Stepper).RecordStep(ctx, c[0].ID, c[0].LeaseToken, task.Step{Seq: i + 1, Name: name, Occurrence: i + 1, Attempt: 1, Result: json.RawMessage(`{"id":"ch-1"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := grit(t, "task", "--store", dsn, itoa(c[0].ID))
	if code != 0 || !strings.Contains(out, "steps (recorded") || !strings.Contains(out, "charge (2)") || !strings.Contains(out, `{"id":"ch-1"}`) {
		t.Errorf("grit task: %d %q %q", code, out, errOut)
	}
	code, out, _ = grit(t, "task", "--json", "--store", dsn, itoa(c[0].ID))
	var got struct{ Steps []task.Step }
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got.Steps) != 2 || got.Steps[1].Occurrence != 2 {
		t.Errorf("grit task --json: %d %q", code, out)
	}
}

// TestTaskShowsItsResult: grit task shows the result a handler set, and
// --json has it as JSON; a task with none has null.
func TestTaskShowsItsResult(t *testing.T) {
	t.Parallel()
	dsn := migratedStore(t)
	st := openStore(t, dsn)
	ctx := context.Background()
	if _, err := st.Enqueue(ctx, []task.NewTask{{Kind: "sum"}, {Kind: "none"}}); err != nil {
		t.Fatal(err)
	}
	c, err := st.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{"sum"}, Limit: 1})
	if err != nil || len(c) != 1 {
		t.Fatal(c, err)
	}
	if err := st.(store.Awaiter).SetResult(ctx, c[0].ID, c[0].LeaseToken, json.RawMessage(`{"total":14}`)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := grit(t, "task", "--store", dsn, itoa(c[0].ID))
	if code != 0 || !strings.Contains(out, "result") || !strings.Contains(out, `{"total":14}`) {
		t.Errorf("grit task: %d %q %q", code, out, errOut)
	}
	for id, want := range map[int64]string{c[0].ID: `{"total":14}`, c[0].ID + 1: `null`} {
		code, out, _ = grit(t, "task", "--json", "--store", dsn, itoa(id))
		var got struct {
			Task struct{ Result json.RawMessage }
		}
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil || string(got.Task.Result) != want {
			t.Errorf("grit task --json %d: %d %q, want result %s", id, code, out, want)
		}
	}
}

// TestTaskListsItsMessages: grit task lists the messages kept for a task
// and not yet received, oldest first, and --json has them.
func TestTaskListsItsMessages(t *testing.T) {
	t.Parallel()
	dsn := migratedStore(t)
	st := openStore(t, dsn)
	ctx := context.Background()
	got, err := st.Enqueue(ctx, []task.NewTask{{Kind: "refund"}})
	if err != nil {
		t.Fatal(err)
	}
	id := got[0].Task.ID
	if code, _, errOut := grit(t, "send", "--store", dsn, itoa(id), "approval", `{"by":"ana"}`); code != 0 {
		t.Fatalf("grit send: %d %s", code, errOut)
	}
	if code, _, errOut := grit(t, "send", "--store", dsn, itoa(id), "note", `"soon"`); code != 0 {
		t.Fatalf("grit send: %d %s", code, errOut)
	}
	code, out, errOut := grit(t, "task", "--store", dsn, itoa(id))
	if code != 0 || !strings.Contains(out, "messages (kept") || strings.Index(out, `{"by":"ana"}`) > strings.Index(out, `"soon"`) || !strings.Contains(out, "approval") {
		t.Errorf("grit task: %d %q %q", code, out, errOut)
	}
	code, out, _ = grit(t, "task", "--json", "--store", dsn, itoa(id))
	var js struct{ Messages []task.Message }
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || len(js.Messages) != 2 || js.Messages[0].Topic != "approval" || string(js.Messages[1].Payload) != `"soon"` {
		t.Errorf("grit task --json: %d %q", code, out)
	}
}
