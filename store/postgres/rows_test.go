package postgres_test

import (
	"context"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/store/postgres"
	"github.com/grit-run/grit/task"
)

// TestTaskRowsReadAlikeInBothFormats reads the same tasks through a store
// whose statements get binary results, read from their wire values, and
// through one on the simple protocol, whose text results go through Scan:
// a task with every column set and one with every nullable column NULL
// must come out the same.
func TestTaskRowsReadAlikeInBothFormats(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t)
	fast, slow := openIn(t, schema), openSimple(t, schema)

	ids, err := fast.Enqueue(ctx, []task.NewTask{
		{Kind: "plain"},
		{Name: "full", Kind: "full", Args: []byte(`{"a":[1,2]}`), Queue: "q", Group: "g", Tenant: "acme", Priority: -3,
			Policy: "4 1s 1m", PoisonAfter: 3, Timeout: time.Minute, Grace: 7 * time.Second, IdempotencyKey: "key-1",
			Trace: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{Kind: "empty-args", Args: []byte{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	db := admin(t)
	var run int64
	if err := db.QueryRow(ctx, `INSERT INTO `+schema+`.runs (name, state) VALUES ('r', 'RUNNING') RETURNING id`).Scan(&run); err != nil {
		t.Fatal(err)
	}
	// Times before 2000 and with microseconds, a far lease, a negative delay.
	_, err = db.Exec(ctx, `UPDATE `+schema+`.tasks SET run_id = $2, state = 'RUNNING', attempt = 2,
		next_at = '1999-12-31 23:59:59.123456+00', prev_delay_ns = -5, lease_owner = 'w-1', lease_token = 1234567890123,
		lease_expires = '2262-04-11 23:47:16.854775+00', last_error = 'boom', fingerprint = 'fp', streak = 2, deferrals = 7, snoozes = 3, waits = 4, origin = 'file:h1',
		attempt_trace = '00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01',
		created_at = '1970-01-01 00:00:00.000001+00', first_started_at = now(), finished_at = now() + interval '1 day'
		WHERE id = $1`, ids[1].ID, run)
	if err != nil {
		t.Fatal(err)
	}

	rows, err := db.Query(ctx, `SELECT id, run_id, name, kind, args, queue, group_name, priority, state,
		policy, poison_after, timeout_ns, grace_ns, attempt, next_at, prev_delay_ns,
		lease_owner, lease_token, lease_expires, last_error, fingerprint, streak,
		idempotency_key, created_at, first_started_at, finished_at, tenant, deferrals, trace, attempt_trace, snoozes, waits, origin FROM `+schema+`.tasks`)
	if err != nil {
		t.Fatal(err)
	}
	binary := postgres.RawTaskRows(rows.FieldDescriptions())
	rows.Close()
	if !binary {
		t.Fatal("rows of the task columns on an extended-protocol connection are not read from their wire values")
	}

	want, err := slow.ListTasks(ctx, task.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := fast.ListTasks(ctx, task.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 3 {
		t.Fatalf("%d tasks through Scan, want 3", len(want))
	}
	full := reflect.ValueOf(want[1])
	for i := range full.NumField() {
		// A list leaves a task's Result out (a single read carries it:
		// the Awaiter conformance cases), so no list reads it.
		if full.Type().Field(i).Name == "Result" {
			continue
		}
		if full.Field(i).IsZero() {
			t.Errorf("the full task's %s is zero: the test does not cover it", full.Type().Field(i).Name)
		}
	}
	if want[2].Args == nil || len(want[2].Args) != 0 {
		t.Errorf("empty arguments read as %#v through Scan, want empty and not nil", want[2].Args)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("task %d from wire values:\n %+v\nthrough Scan:\n %+v", want[i].ID, got[i], want[i])
		}
	}
}

// openSimple opens a store on schema whose connections use the simple
// protocol, and so get every result as text.
func openSimple(t *testing.T, schema string) *postgres.Store {
	t.Helper()
	u, err := url.Parse(testDSN())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("default_query_exec_mode", "simple_protocol")
	u.RawQuery = q.Encode()
	s, err := postgres.OpenConfig(t.Context(), postgres.Config{DSN: u.String(), Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestClaimOrderInBothFormats: a claim's rows come unsorted, each with its
// place; read from wire values or through Scan, they land in claim order.
func TestClaimOrderInBothFormats(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	schema := newSchema(t)
	for name, s := range map[string]*postgres.Store{"wire values": openIn(t, schema), "Scan": openSimple(t, schema)} {
		var ts []task.NewTask
		for _, p := range []int{1, 5, 3, 5, 0, 9} {
			ts = append(ts, task.NewTask{Kind: name, Priority: p})
		}
		if _, err := s.Enqueue(ctx, ts); err != nil {
			t.Fatal(err)
		}
		got, err := s.Claim(ctx, store.ClaimRequest{Worker: "w", Kinds: []string{name}, Limit: 10})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var prios []int
		for i, c := range got {
			prios = append(prios, c.Priority)
			if i > 0 && c.Priority == got[i-1].Priority && c.ID < got[i-1].ID {
				t.Errorf("%s: task %d after task %d of the same priority", name, c.ID, got[i-1].ID)
			}
		}
		if want := []int{9, 5, 5, 3, 1, 0}; !reflect.DeepEqual(prios, want) {
			t.Errorf("%s: claimed priorities %v, want %v", name, prios, want)
		}
	}
}

// TestClaimsWhileTasksArrive claims while another connection enqueues
// urgent tasks one at a time over a backlog of ordinary ones. A claim's
// due_tasks can lock a task committed after the claim's UPDATE took its
// snapshot, which the UPDATE then leaves alone; an urgent one comes first
// in claim order, so the claim's rows then start at place 2. The claim
// must return the rest in order and leave that task for the next one.
// Every task is claimed exactly once.
func TestClaimsWhileTasksArrive(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s, other := openIn(t, schema), openIn(t, schema)
	const backlog, urgent = 4000, 2000
	enqueueN(t, s, backlog)
	done := make(chan error, 1)
	go func() {
		for range urgent {
			if err := boundedCall(t, func(ctx context.Context) error {
				_, err := other.Enqueue(ctx, []task.NewTask{{Kind: "k", Priority: 1}})
				return err
			}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	seen := map[int64]bool{}
	enqueued := false
	for len(seen) < backlog+urgent {
		var got []task.Task
		err := boundedCall(t, func(ctx context.Context) (err error) {
			got, err = s.Claim(ctx, store.ClaimRequest{Worker: "w", Limit: 2})
			return err
		})
		if err != nil {
			t.Fatalf("claim after %d tasks: %v", len(seen), err)
		}
		if len(got) == 0 && enqueued {
			t.Fatalf("%d of %d tasks claimed, then a claim after the last enqueue found nothing", len(seen), backlog+urgent)
		}
		if !enqueued && len(got) == 0 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			enqueued = true
		}
		for i, c := range got {
			if seen[c.ID] {
				t.Fatalf("task %d claimed twice", c.ID)
			}
			seen[c.ID] = true
			if i > 0 && (c.Priority > got[i-1].Priority || c.Priority == got[i-1].Priority && c.ID < got[i-1].ID) {
				t.Errorf("claim order: task %d (priority %d) after task %d (priority %d)", c.ID, c.Priority, got[i-1].ID, got[i-1].Priority)
			}
		}
	}
	if !enqueued {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
