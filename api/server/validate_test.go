package server

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/task"
)

func TestCheckName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"email.send", "exec", "a", "ingest/batch:v2", "Q_1-x", strings.Repeat("k", 200)} {
		if err := checkName("kind", ok, "e", true); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", " k", "k k", "-k", ".k", "k\n", "ké", strings.Repeat("k", 201)} {
		err := checkName("kind", bad, "e", true)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "kind" || !errors.Is(err, task.ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if err := checkName("queue", "", "e", false); err != nil {
		t.Errorf("an optional name left empty: %v", err)
	}
}

func TestQuoteCuts(t *testing.T) {
	t.Parallel()
	q := quote(strings.Repeat("é", 100))
	if !strings.HasSuffix(q, "… (200 bytes)") || !utf8.ValidString(q) || len(q) > 100 {
		t.Fatalf("quote: %s", q)
	}
}

func TestCheckPayload(t *testing.T) {
	t.Parallel()
	l := limits{maxPayload: 10, maxBatch: 2}
	if err := l.checkPayload("args", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := l.checkPayload("args", nil); err != nil {
		t.Fatal(err)
	}
	err := l.checkPayload("args", []byte(`"0123456789"`))
	if err == nil || !strings.Contains(err.Error(), "12 bytes, more than the limit of 10 bytes") {
		t.Fatalf("oversize: %v", err)
	}
	if err := l.checkPayload("args", []byte(`{a}`)); err == nil || !strings.Contains(err.Error(), "not JSON (invalid character") {
		t.Fatalf("bad JSON: %v", err)
	}
}

func TestFormatBytes(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{1 << 20: "1 MiB", 3 << 10: "3 KiB", 1000: "1000 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzValidateEnqueue: whatever a client sends, validation does not panic;
// what it accepts the store accepts too, within the limits; what it
// rejects is a FieldError naming a field of the request.
func FuzzValidateEnqueue(f *testing.F) {
	f.Add("email.send", []byte(`{"to":"a@example.com"}`), "mail", "smtp", "10 5s 10m", "order-1", int64(5), int64(30), int64(0))
	f.Add("", []byte(nil), "", "", "", "", int64(0), int64(0), int64(0))
	f.Add("send email!", []byte(`{"a":`), "-q", "g g", "10 5x", "k\x00", int64(1)<<40, int64(-1), int64(1)<<62)
	f.Add("k", []byte(`"`+strings.Repeat("x", 80)+`"`), "q", "", "never", strings.Repeat("k", 201), int64(-5), int64(1)<<40, int64(-1)<<40)
	l := limits{maxPayload: 64, maxBatch: 3}
	f.Fuzz(func(t *testing.T, kind string, args []byte, queue, group, policy, key string, priority, timeoutSec, runAtSec int64) {
		n := &pb.NewTask{
			Kind: kind, Args: args, Queue: queue, Group: group, Policy: policy, IdempotencyKey: key,
			Priority: priority, Timeout: &durationpb.Duration{Seconds: timeoutSec},
			RunAt: &timestamppb.Timestamp{Seconds: runAtSec},
		}
		got, err := l.enqueue(&pb.EnqueueRequest{Task: n})
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "task") || fe.Problem == "" || !errors.Is(err, task.ErrInvalid) {
				t.Fatalf("rejected with %v (%T): want a FieldError on a field of task", err, err)
			}
			return
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("accepted %+v, which the store refuses: %v", got, err)
		}
		if !nameRE.MatchString(got.Kind) || len(got.Args) > l.maxPayload || (len(got.Args) > 0 && !json.Valid(got.Args)) {
			t.Fatalf("accepted a bad kind or args: %+v", got)
		}
		if got.Timeout < 0 || got.Timeout != time.Duration(timeoutSec)*time.Second || len(got.IdempotencyKey) > maxText {
			t.Fatalf("accepted timeout %v or key %q", got.Timeout, got.IdempotencyKey)
		}
		// A batch of the same task is accepted too, and a batch past the
		// limit never is.
		if _, err := l.enqueueBatch(&pb.EnqueueBatchRequest{Tasks: []*pb.NewTask{n, n}}); err != nil {
			t.Fatalf("a batch of an accepted task: %v", err)
		}
		if _, err := l.enqueueBatch(&pb.EnqueueBatchRequest{Tasks: []*pb.NewTask{n, n, n, n}}); err == nil {
			t.Fatal("a batch past the limit was accepted")
		}
	})
}

// FuzzValidateFail: a worker's report validates without panicking, and a
// report accepted becomes a failure the engine can decide.
func FuzzValidateFail(f *testing.F) {
	f.Add(int64(1), int64(1), int32(6), "boom", int64(0), true, int32(3), "SIGKILL")
	f.Add(int64(0), int64(-1), int32(99), "", int64(-5), false, int32(0), "\x00")
	f.Add(int64(7), int64(2), int32(4), "429", int64(600), false, int32(0), "")
	l := limits{maxPayload: 64, maxBatch: 3}
	f.Fuzz(func(t *testing.T, id, token int64, class int32, msg string, afterSec int64, hasExit bool, exit int32, signal string) {
		r := &pb.FailRequest{TaskId: id, LeaseToken: token, ErrorClass: pb.ErrorClass(class), Message: msg, Signal: signal}
		if afterSec != 0 {
			r.RetryAfter = &durationpb.Duration{Seconds: afterSec}
		}
		if hasExit {
			r.ExitCode = &exit
		}
		res, err := l.result("", &pb.Result{TaskId: id, LeaseToken: token, End: &pb.Result_Fail{Fail: failedOf(r)}})
		after := res.after
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("rejected with %v (%T)", err, err)
			}
			return
		}
		if after < 0 || after > maxRetryAfter || id <= 0 || token <= 0 {
			t.Fatalf("accepted id %d token %d after %v", id, token, after)
		}
		outcome, cause := failureOf(failedOf(r), after)
		if cause == nil || (outcome != task.OutcomeError && outcome != task.OutcomeTimeout) {
			t.Fatalf("failure %v, %v", outcome, cause)
		}
	})
}

// FuzzValidateReport: a Report validates without panicking; the request
// is refused only for what spoils every result (its worker, its size),
// each result alone for its own fault, always as a FieldError, and an
// accepted result names a task and a token and ends one way.
func FuzzValidateReport(f *testing.F) {
	f.Add("mailer-1", 2, int64(1), int64(1), uint8(0), int64(0), int32(6))
	f.Add("", 1, int64(0), int64(-1), uint8(1), int64(-5), int32(99))
	f.Add("w w", 4, int64(7), int64(2), uint8(2), int64(600), int32(4))
	f.Add("w", 0, int64(7), int64(2), uint8(3), int64(1), int32(1))
	l := limits{maxPayload: 64, maxBatch: 3}
	f.Fuzz(func(t *testing.T, worker string, n int, id, token int64, end uint8, sec int64, class int32) {
		n = min(max(n, 0), 5)
		d := &durationpb.Duration{Seconds: sec}
		ends := []func() *pb.Result{
			func() *pb.Result { return &pb.Result{End: &pb.Result_Complete{Complete: &pb.Completed{Output: "ok"}}} },
			func() *pb.Result {
				return &pb.Result{End: &pb.Result_Fail{Fail: &pb.Failed{ErrorClass: pb.ErrorClass(class), RetryAfter: d}}}
			},
			func() *pb.Result { return &pb.Result{End: &pb.Result_Snooze{Snooze: &pb.Snoozed{Delay: d}}} },
			func() *pb.Result { return &pb.Result{} },
		}
		r := &pb.ReportRequest{WorkerId: worker}
		for i := range n {
			x := ends[(int(end)+i)%len(ends)]()
			x.TaskId, x.LeaseToken = id+int64(i), token
			r.Results = append(r.Results, x)
		}
		rs, err := l.report(r)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || (fe.Field != "worker_id" && fe.Field != "results") {
				t.Fatalf("refused the request with %v (%T): want a FieldError on worker_id or results", err, err)
			}
			if nameRE.MatchString(worker) && len(worker) <= maxText && n >= 1 && n <= l.maxBatch {
				t.Fatalf("refused a request of %d results from %q: %v", n, worker, err)
			}
			return
		}
		if len(rs) != n || n == 0 || n > l.maxBatch {
			t.Fatalf("accepted %d results of %d, limit %d", len(rs), n, l.maxBatch)
		}
		for i, x := range rs {
			if x.err != nil {
				var fe *FieldError
				if !errors.As(x.err, &fe) || !errors.Is(x.err, task.ErrInvalid) {
					t.Fatalf("result %d refused with %v (%T): want a FieldError", i, x.err, x.err)
				}
				continue
			}
			if x.r.GetTaskId() <= 0 || x.r.GetLeaseToken() <= 0 || x.r.GetEnd() == nil || x.op() == "report" {
				t.Fatalf("accepted result %d: %v", i, x.r)
			}
			if x.delay < 0 || x.after < 0 || x.after > maxRetryAfter {
				t.Fatalf("accepted result %d with delay %v, after %v", i, x.delay, x.after)
			}
		}
	})
}
