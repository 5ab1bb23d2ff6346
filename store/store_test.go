package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func TestValidateRun(t *testing.T) {
	t.Parallel()
	ok := task.NewRun{Name: "r", Tasks: []task.NewTask{
		{Name: "a", Kind: "k"}, {Name: "b", Kind: "k", Needs: []string{"a"}}, {Name: "c", Kind: "k", Needs: []string{"a", "b"}},
	}}
	if err := store.ValidateRun(ok); err != nil {
		t.Fatalf("a valid DAG: %v", err)
	}
	tests := []struct {
		name string
		r    task.NewRun
		says string
	}{
		{"unnamed", task.NewRun{Name: "r", Tasks: []task.NewTask{{Kind: "k"}}}, "has no name"},
		{"duplicate", task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a", Kind: "k"}, {Name: "a", Kind: "k"}}}, "two tasks are named"},
		{"no kind", task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a"}}}, "no kind"},
		{"unknown need", task.NewRun{Name: "r", Tasks: []task.NewTask{{Name: "a", Kind: "k", Needs: []string{"z"}}}}, `needs "z"`},
		{"cycle", task.NewRun{Name: "r", Tasks: []task.NewTask{
			{Name: "a", Kind: "k", Needs: []string{"c"}}, {Name: "b", Kind: "k", Needs: []string{"a"}}, {Name: "c", Kind: "k", Needs: []string{"b"}}}}, "cycle"},
		{"negative max_failures", task.NewRun{Name: "r", MaxFailures: -1}, "max_failures"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := store.ValidateRun(tt.r)
			if !errors.Is(err, task.ErrInvalid) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err %v, want ErrInvalid saying %q", err, tt.says)
			}
		})
	}
}

var fakeSchemes atomic.Int64

func TestOpenUnknownScheme(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{"", "grit.db", "nosuch:x"} {
		if _, err := store.Open(context.Background(), dsn); err == nil {
			t.Errorf("Open(%q) succeeded", dsn)
		}
	}
	// A scheme of its own per run, so that -count=N does not register twice.
	scheme := fmt.Sprintf("fake-%d", fakeSchemes.Add(1))
	store.Register(scheme, func(ctx context.Context, dsn string) (store.Store, error) {
		return nil, errors.New("fake: " + dsn)
	})
	if _, err := store.Open(context.Background(), scheme+":x"); err == nil || err.Error() != "fake: "+scheme+":x" {
		t.Errorf("Open did not reach the registered driver: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a scheme twice did not panic")
		}
	}()
	store.Register(scheme, nil)
}

func TestMigrations(t *testing.T) {
	t.Parallel()
	ms, err := store.Migrations(fstest.MapFS{
		"m/0002_more.sql": {Data: []byte("B")},
		"m/0001_init.sql": {Data: []byte("A")},
		"m/README":        {Data: []byte("not a migration")},
	}, "m")
	if err != nil || len(ms) != 2 || ms[0].Version != 1 || ms[0].Name != "init" || ms[1].SQL != "B" {
		t.Fatalf("Migrations = %+v, %v", ms, err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"misnamed":  {"m/init.sql": {}},
		"zero":      {"m/0000_x.sql": {}},
		"duplicate": {"m/0001_a.sql": {}, "m/1_b.sql": {}},
	} {
		if _, err := store.Migrations(fsys, "m"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCheckFinishes(t *testing.T) {
	t.Parallel()
	errs, todo := store.CheckFinishes([]store.Finish{{TaskID: 1, State: task.Success}, {TaskID: 2, State: task.Running}, {TaskID: 3, State: task.Ready}})
	if len(todo) != 2 || todo[0] != 0 || todo[1] != 2 || !errors.Is(errs[1], task.ErrInvalid) || errs[0] != nil {
		t.Errorf("todo %v, errs %v", todo, errs)
	}
}

func TestFinishHelpers(t *testing.T) {
	t.Parallel()
	fs := []store.Finish{
		{TaskID: 9, State: task.Success}, {TaskID: 3, State: task.Failed}, {TaskID: 9, State: task.Failed},
		{TaskID: 5, State: task.Retrying}, {TaskID: 3, State: task.Ready, Attempt: task.Attempt{Outcome: task.OutcomeInterrupted}},
	}
	rounds := store.Rounds(fs, []int{0, 1, 2, 3, 4})
	if len(rounds) != 2 || fmt.Sprint(rounds[0]) != "[1 3 0]" || fmt.Sprint(rounds[1]) != "[4 2]" {
		t.Errorf("rounds %v; want [[1 3 0] [4 2]] (no task twice in a round, each in id order)", rounds)
	}
	wantOutcomes := []task.Outcome{task.OutcomeSuccess, task.OutcomeError, task.OutcomeError, task.OutcomeError, task.OutcomeInterrupted}
	for i, f := range fs {
		if f.Outcome() != wantOutcomes[i] {
			t.Errorf("item %d: outcome %s, want %s", i, f.Outcome(), wantOutcomes[i])
		}
	}
	if got := (store.Finish{State: task.Sensing}).Outcome(); got != task.OutcomeSnoozed {
		t.Errorf("snooze outcome %s", got)
	}
	succeeded, failed, runs := store.Ended(fs, []int{0, 1, 3}, map[int64]int64{9: 2, 3: 1, 5: 1})
	if fmt.Sprint(succeeded, failed, runs) != "[9] [3] [1 2]" {
		t.Errorf("Ended = %v %v %v", succeeded, failed, runs)
	}
	if got := store.Unique([]string{"b", "a", "b", "c", "a"}); fmt.Sprint(got) != "[b a c]" {
		t.Errorf("Unique = %v", got)
	}
}

// TestArgsMustBeUTF8JSON: args and payloads that a reader could not parse
// are refused before they are stored, saying where.
func TestArgsMustBeUTF8JSON(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []byte
		says string
	}{
		{nil, ""},
		{[]byte(`{"to":"a@example.com"}`), ""},
		{[]byte(`"caf\u00e9"`), ""},
		{[]byte("\"caf\xe9\""), "not valid UTF-8 (at byte 4)"},
		{[]byte(`{"to":`), "not JSON"},
	} {
		err := task.NewTask{Name: "n", Kind: "k", Args: tt.args}.Validate()
		if tt.says == "" && err != nil || tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says) || !errors.Is(err, task.ErrInvalid)) {
			t.Errorf("args %q: error %v, want one saying %q", tt.args, err, tt.says)
		}
		if tt.says != "" {
			if err := store.ValidateEvent(task.Event{Topic: "t", Payload: tt.args}); err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("payload %q: error %v, want one saying %q", tt.args, err, tt.says)
			}
		}
	}
}

// A timeout is 0 or more, or task.AutoTimeout, the one negative value a
// store keeps, as is.
func TestValidateTaskTimeout(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d  time.Duration
		ok bool
	}{{0, true}, {time.Second, true}, {task.AutoTimeout, true}, {-2, false}, {-time.Second, false}} {
		err := task.NewTask{Name: "n", Kind: "k", Timeout: c.d}.Validate()
		if (err == nil) != c.ok {
			t.Errorf("timeout %v: %v, want ok %v", c.d, err, c.ok)
		}
	}
}
