package store_test

import (
	"testing"
	"time"

	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

func TestPlainSuccess(t *testing.T) {
	t.Parallel()
	exit := 0
	for _, c := range []struct {
		name string
		f    store.Finish
		want bool
	}{
		{"a bare success", store.Finish{State: task.Success}, true},
		{"a success with its end and a trace", store.Finish{State: task.Success, Trace: "00-1-2-01",
			Attempt: task.Attempt{Outcome: task.OutcomeSuccess, EndedAt: time.Unix(1, 0)}}, true},
		{"a failure", store.Finish{State: task.Failed}, false},
		{"a retry", store.Finish{State: task.Retrying}, false},
		{"a success reported as a timeout", store.Finish{State: task.Success, Attempt: task.Attempt{Outcome: task.OutcomeTimeout}}, false},
		{"output", store.Finish{State: task.Success, Attempt: task.Attempt{Output: "done"}}, false},
		{"an exit code", store.Finish{State: task.Success, Attempt: task.Attempt{ExitCode: &exit}}, false},
		{"a timeout of its own", store.Finish{State: task.Success, Attempt: task.Attempt{Timeout: time.Minute}}, false},
		{"a decision", store.Finish{State: task.Success, Attempt: task.Attempt{Decision: "done"}}, false},
		{"events", store.Finish{State: task.Success, Publish: []task.Event{{Topic: "t"}}}, false},
		{"tasks to enqueue", store.Finish{State: task.Success, Enqueue: []task.NewTask{{Kind: "k"}}}, false},
		{"a refund", store.Finish{State: task.Success, Refund: true}, false},
		{"a streak", store.Finish{State: task.Success, Streak: 1}, false},
	} {
		if got := c.f.PlainSuccess(); got != c.want {
			t.Errorf("%s: PlainSuccess() = %v, want %v", c.name, got, c.want)
		}
	}
}
