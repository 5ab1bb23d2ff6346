package server

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/grit-run/grit/api/gritv1"
	"github.com/grit-run/grit/retry"
	"github.com/grit-run/grit/store"
	"github.com/grit-run/grit/task"
)

// Every request is checked here, before anything is written, so that a bad
// request changes nothing and its answer names the field at fault.

// FieldError is a request that failed validation: Field names what was
// wrong as a path into the request ("tasks[3].kind"), Problem says why and
// what to do. It matches task.ErrInvalid, and is answered
// INVALID_ARGUMENT. Reason is its ErrorInfo's reason when a client should
// tell it from other invalid requests (a limit passed:
// BATCH_TOO_LARGE, PAYLOAD_TOO_LARGE); "" is INVALID_ARGUMENT.
type FieldError struct {
	Field   string
	Problem string
	Reason  string
}

func (e *FieldError) Error() string        { return e.Field + ": " + e.Problem }
func (e *FieldError) Is(target error) bool { return target == task.ErrInvalid }

func bad(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// over is bad for a request past one of the server's limits (reason
// BATCH_TOO_LARGE or PAYLOAD_TOO_LARGE).
func over(reason, field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...), Reason: reason}
}

// nameRE is the format of kinds, queues, groups and worker ids: the format
// of topics (store.ValidateEvent), so one rule names everything.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,199}$`)

const nameRule = "want 1 to 200 letters, digits and _ . : / -, starting with a letter or digit"

// maxText bounds free-form strings: idempotency keys, task names, tenants.
const maxText = 200

// Leases a worker may ask for, and how long a Claim may wait.
const (
	minLease = time.Second
	maxLease = time.Hour
	maxWait  = time.Minute
)

// limits are the bounds a request is checked against.
type limits struct {
	maxPayload int
	maxBatch   int
}

// checkName checks a name; example completes the message.
func checkName(field, v, example string, required bool) error {
	if v == "" {
		if required {
			return bad(field, "missing: give one (e.g. %s)", example)
		}
		return nil
	}
	if !nameRE.MatchString(v) {
		return bad(field, "%s is not a name: %s (e.g. %s)", quote(v), nameRule, example)
	}
	return nil
}

// checkText checks a free-form string: at most maxText bytes of UTF-8
// without control characters.
func checkText(field, v string) error {
	switch {
	case len(v) > maxText:
		return bad(field, "%d bytes: want at most %d", len(v), maxText)
	case !utf8.ValidString(v):
		return bad(field, "not UTF-8")
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return bad(field, "%s has a control character: want printable text", quote(v))
	}
	return nil
}

// checkPayload checks JSON args or an event's payload; empty is none.
func (l limits) checkPayload(field string, b []byte) error {
	if len(b) > l.maxPayload {
		return over(pb.ReasonPayloadTooLarge, field, "%d bytes, more than the limit of %s: keep large data elsewhere and pass a reference to it, or raise the server's limit (GRIT_MAX_PAYLOAD)",
			len(b), formatBytes(l.maxPayload))
	}
	if p := task.JSONProblem(b); p != "" {
		return bad(field, "%s", p)
	}
	return nil
}

// checkInt32 checks a number the store keeps as a 32-bit integer.
func checkInt32(field string, v int64, min int64) (int, error) {
	if v < min || v > math.MaxInt32 {
		return 0, bad(field, "%d is out of range: want %d to %d", v, min, int64(math.MaxInt32))
	}
	return int(v), nil
}

// checkDuration checks a duration: unset is 0; lo and hi bound a set one
// (hi 0: no bound).
func checkDuration(field string, d *durationpb.Duration, lo, hi time.Duration) (time.Duration, error) {
	if d == nil {
		return 0, nil
	}
	if err := d.CheckValid(); err != nil {
		return 0, bad(field, "not a valid duration (%v)", err)
	}
	v := d.AsDuration()
	if v < 0 && lo == 0 {
		return 0, bad(field, "negative (%s): want 0 or more", retry.FormatDuration(v))
	}
	if v < lo || (hi > 0 && v > hi) {
		if hi > 0 {
			return 0, bad(field, "%s: want %s to %s", retry.FormatDuration(v), retry.FormatDuration(lo), retry.FormatDuration(hi))
		}
		return 0, bad(field, "%s: want at least %s", retry.FormatDuration(v), retry.FormatDuration(lo))
	}
	return v, nil
}

// checkDue checks a due time: unset is now; a set one is within
// task.DueWindow of the server's clock.
func checkDue(field string, ts *timestamppb.Timestamp) (time.Time, error) {
	if ts == nil {
		return time.Time{}, nil
	}
	if err := ts.CheckValid(); err != nil {
		return time.Time{}, bad(field, "not a valid time (%v)", err)
	}
	at := ts.AsTime()
	if p := task.DueProblem(at, time.Now()); p != "" {
		return time.Time{}, bad(field, "%s", p)
	}
	return at, nil
}

func checkID(field string, id int64) error {
	if id <= 0 {
		return bad(field, "%d: want a task id (a positive number)", id)
	}
	return nil
}

// newTask checks one task to enqueue; field prefixes its fields' names.
func (l limits) newTask(field string, n *pb.NewTask) (task.NewTask, error) {
	if n == nil {
		return task.NewTask{}, bad(field, "missing: give the task (at least its kind)")
	}
	t := task.NewTask{
		Kind: n.GetKind(), Args: n.GetArgs(), Queue: n.GetQueue(), Group: n.GetGroup(),
		IdempotencyKey: n.GetIdempotencyKey(), ReturnExisting: n.GetReturnExisting(), Name: n.GetName(),
	}
	if len(t.Args) == 0 {
		t.Args = nil
	}
	var err error
	if t.Policy, err = policyOf(field, n.GetPolicy(), n.GetRetryPolicy()); err != nil {
		return task.NewTask{}, err
	}
	err = firstErr(
		func() error { return checkName(field+".kind", t.Kind, "email.send", true) },
		func() error { return l.checkPayload(field+".args", t.Args) },
		func() error { return checkName(field+".queue", t.Queue, "mail", false) },
		func() error { return checkName(field+".group", t.Group, "smtp", false) },
		func() error { return checkText(field+".idempotency_key", t.IdempotencyKey) },
		func() error { return checkText(field+".name", t.Name) },
		func() error { return checkText(field+".tenant", n.GetTenant()) },
	)
	if err == nil {
		err = numbers(field, n, &t)
	}
	if err != nil {
		return task.NewTask{}, err
	}
	setTenant(&t, n.GetTenant())
	t.Origin = task.OriginAPI // a worker runs a process task from the API only if it allows it
	if err := t.Validate(); err != nil {
		return task.NewTask{}, bad(field, "%v", err)
	}
	return t, nil
}

// numbers checks and sets a new task's numbers, durations and time.
func numbers(field string, n *pb.NewTask, t *task.NewTask) (err error) {
	if t.Priority, err = checkInt32(field+".priority", n.GetPriority(), math.MinInt32); err != nil {
		return err
	}
	if t.PoisonAfter, err = checkInt32(field+".poison_after", n.GetPoisonAfter(), 0); err != nil {
		return err
	}
	if t.Timeout, err = checkDuration(field+".timeout", n.GetTimeout(), 0, task.MaxTimeout); err != nil {
		return err
	}
	if n.GetAutoTimeout() {
		if n.GetTimeout() != nil {
			return bad(field+".auto_timeout", "set with a timeout (%s): set one of them", retry.FormatDuration(t.Timeout))
		}
		t.Timeout = task.AutoTimeout
	}
	if t.Grace, err = checkDuration(field+".grace", n.GetGrace(), 0, task.MaxGrace); err != nil {
		return err
	}
	t.RunAt, err = checkDue(field+".run_at", n.GetRunAt())
	return err
}

// policyOf checks a request's retry policy, given as a string (policy)
// or as fields (retry_policy), and returns it as the string the server
// keeps ("" for none). prefix is the fields' parent ("task", "" for a
// Fail's).
func policyOf(prefix, p string, r *pb.RetryPolicy) (string, error) {
	field := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	if r != nil {
		if p != "" {
			return "", bad(field("retry_policy"), "set with policy %s: give the policy one way, not both", quote(p))
		}
		rp, err := r.Policy()
		var pe *pb.PolicyError
		if errors.As(err, &pe) {
			return "", bad(field("retry_policy."+pe.Field), "%s", pe.Msg)
		}
		if err != nil {
			return "", bad(field("retry_policy"), "%v", err)
		}
		return rp.String(), nil
	}
	if p == "" {
		return "", nil
	}
	if len(p) > maxText {
		return "", bad(field("policy"), "%d bytes: want at most %d", len(p), maxText)
	}
	if _, err := retry.Parse(p); err != nil {
		return "", bad(field("policy"), "%v", err)
	}
	return p, nil
}

func firstErr(checks ...func() error) error {
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

func (l limits) enqueue(r *pb.EnqueueRequest) (task.NewTask, error) {
	return l.newTask("task", r.GetTask())
}

func (l limits) enqueueBatch(r *pb.EnqueueBatchRequest) ([]task.NewTask, error) {
	if err := l.checkBatch("tasks", len(r.GetTasks())); err != nil {
		return nil, err
	}
	out := make([]task.NewTask, len(r.GetTasks()))
	for i, n := range r.GetTasks() {
		t, err := l.newTask(fmt.Sprintf("tasks[%d]", i), n)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

func (l limits) checkBatch(field string, n int) error {
	switch {
	case n == 0:
		return bad(field, "empty: give at least one")
	case n > l.maxBatch:
		return over(pb.ReasonBatchTooLarge, field, "%d items, more than the limit of %d: split the batch, or raise the server's limit (GRIT_MAX_BATCH)", n, l.maxBatch)
	}
	return nil
}

func (l limits) events(field string, evs []*pb.Event, required bool) ([]task.Event, error) {
	if len(evs) == 0 && !required {
		return nil, nil
	}
	if err := l.checkBatch(field, len(evs)); err != nil {
		return nil, err
	}
	out := make([]task.Event, len(evs))
	for i, e := range evs {
		f := fmt.Sprintf("%s[%d]", field, i)
		if e == nil {
			return nil, bad(f, "missing: give the event (at least its topic)")
		}
		ev := task.Event{Topic: e.GetTopic(), Payload: e.GetPayload(), Key: e.GetKey()}
		setEventTenant(&ev, e.GetTenant())
		if len(ev.Payload) == 0 {
			ev.Payload = nil
		}
		err := firstErr(
			func() error { return checkName(f+".topic", ev.Topic, "ingest.batch-ready", true) },
			func() error { return l.checkPayload(f+".payload", ev.Payload) },
			func() error { return checkText(f+".key", ev.Key) },
			func() error { return checkText(f+".tenant", e.GetTenant()) },
		)
		if err != nil {
			return nil, err
		}
		if err := store.ValidateEvent(ev); err != nil {
			return nil, bad(f, "%v", err)
		}
		out[i] = ev
	}
	return out, nil
}

func (l limits) list(r *pb.ListRequest) (task.Filter, error) {
	f := task.Filter{RunID: r.GetRunId(), Kind: r.GetKind(), Queue: r.GetQueue()}
	for i, s := range r.GetStates() {
		st := s.Task()
		if st == "" {
			return f, bad(fmt.Sprintf("states[%d]", i), "%v is not a state: want one of %v, as TASK_STATE_ values", s, task.States)
		}
		f.States = append(f.States, st)
	}
	size := int(r.GetPageSize())
	switch {
	case r.GetRunId() < 0:
		return f, bad("run_id", "%d: want a run id, or 0 for any run", r.GetRunId())
	case size < 0:
		return f, bad("page_size", "%d: want 1 to %d, or 0 for %d", size, maxList, defaultList)
	case size == 0:
		size = defaultList
	}
	switch r.GetView() {
	case pb.TaskView_TASK_VIEW_UNSPECIFIED, pb.TaskView_TASK_VIEW_BASIC, pb.TaskView_TASK_VIEW_FULL:
	default:
		return f, bad("view", "%d is not a view: want TASK_VIEW_BASIC, TASK_VIEW_FULL or unset (FULL)", r.GetView())
	}
	f.Limit = min(size, maxList) // AIP-158: a larger size is the largest
	var err error
	if f.AfterID, err = readPageToken(pagedList(r)); err != nil {
		return f, err
	}
	return f, firstErr(
		func() error { return checkName("kind", f.Kind, "email.send", false) },
		func() error { return checkName("queue", f.Queue, "mail", false) },
	)
}

// The page sizes of List.
const (
	defaultList = 100
	maxList     = 1000
)

// claim checks a claim; lease is the server's default lease.
func (l limits) claim(r *pb.ClaimRequest, lease time.Duration) (req store.ClaimRequest, wait time.Duration, err error) {
	req = store.ClaimRequest{Worker: r.GetWorkerId(), Kinds: r.GetKinds(), Queues: r.GetQueues()}
	if err := checkName("worker_id", req.Worker, "mailer-1", true); err != nil {
		return req, 0, err
	}
	if len(req.Kinds) == 0 {
		return req, 0, bad("kinds", "empty: name the kinds this worker can work (e.g. email.send)")
	}
	for i, k := range req.Kinds {
		if err := checkName(fmt.Sprintf("kinds[%d]", i), k, "email.send", true); err != nil {
			return req, 0, err
		}
	}
	for i, q := range req.Queues {
		if err := checkName(fmt.Sprintf("queues[%d]", i), q, "mail", true); err != nil {
			return req, 0, err
		}
	}
	if len(req.Kinds)+len(req.Queues) > l.maxBatch {
		return req, 0, over(pb.ReasonBatchTooLarge, "kinds", "%d kinds and queues: want at most %d", len(req.Kinds)+len(req.Queues), l.maxBatch)
	}
	limit := r.GetLimit()
	if limit < 0 || limit > int64(l.maxBatch) {
		return req, 0, bad("limit", "%d: want 1 to %d, or 0 for 1", limit, l.maxBatch)
	}
	req.Limit = int(max(limit, 1))
	if req.Lease, err = checkLease("lease", r.GetLease(), lease); err != nil {
		return req, 0, err
	}
	if wait, err = checkDuration("wait", r.GetWait(), 0, maxWait); err != nil {
		return req, 0, err
	}
	return req, wait, firstErr(
		func() error { return checkText("host", r.GetHost()) },
		func() error { return checkText("version", r.GetVersion()) },
	)
}

// checkLease checks a lease a worker asks for; unset is def.
func checkLease(field string, d *durationpb.Duration, def time.Duration) (time.Duration, error) {
	if d == nil {
		return def, nil
	}
	return checkDuration(field, d, minLease, maxLease)
}

// leases checks a worker's leases.
func (l limits) leases(worker string, ls []*pb.Lease) ([]store.Lease, error) {
	if err := checkName("worker_id", worker, "mailer-1", true); err != nil {
		return nil, err
	}
	if len(ls) > l.maxBatch {
		return nil, over(pb.ReasonBatchTooLarge, "leases", "%d leases, more than the limit of %d: heartbeat in parts", len(ls), l.maxBatch)
	}
	out := make([]store.Lease, len(ls))
	for i, x := range ls {
		if err := checkID(fmt.Sprintf("leases[%d].task_id", i), x.GetTaskId()); err != nil {
			return nil, err
		}
		out[i] = store.Lease{TaskID: x.GetTaskId(), Token: x.GetLeaseToken()}
	}
	return out, nil
}

// checkLeaseOf checks the worker, task and token a result is reported
// under. The worker is required: a result is recorded only from the worker
// that holds the lease, so that a worker that mixed up its tasks cannot
// end another's (tokens alone would fence it too, being unique in the
// store, but the refusal would not say whose lease it is).
func checkLeaseOf(worker string, id, token int64) error {
	if err := checkName("worker_id", worker, "mailer-1", true); err != nil {
		return err
	}
	if err := checkID("task_id", id); err != nil {
		return err
	}
	if token <= 0 {
		return bad("lease_token", "%d: want the lease_token the task was claimed with", token)
	}
	return nil
}

// maxOutput bounds what a worker reports of an attempt's output and
// error: their tails are what helps (the engine keeps 4 KiB of each
// stream).
const maxOutput = 64 << 10

// checkOutput bounds the output or error kept on an attempt.
func checkOutput(field, s string) error {
	if len(s) > maxOutput {
		return over(pb.ReasonPayloadTooLarge, field, "%d bytes, more than the limit of %s: send its tail", len(s), formatBytes(maxOutput))
	}
	return nil
}

// report checks a Report: what spoils every result is its error; a
// result that fails its own check carries that error, to be answered with
// it and not recorded.
func (l limits) report(r *pb.ReportRequest) ([]result, error) {
	if err := checkName("worker_id", r.GetWorkerId(), "mailer-1", true); err != nil {
		return nil, err
	}
	if err := l.checkBatch("results", len(r.GetResults())); err != nil {
		return nil, err
	}
	out := make([]result, len(r.GetResults()))
	for i, x := range r.GetResults() {
		out[i], out[i].err = l.result(r.GetWorkerId(), x)
	}
	return out, nil
}

// result checks how one attempt ended, as a Report's item or a single
// Complete, Fail or Snooze (whose worker may be left out) reports it.
func (l limits) result(worker string, r *pb.Result) (result, error) {
	res := result{r: r}
	if err := checkLeaseOf(worker, r.GetTaskId(), r.GetLeaseToken()); err != nil {
		return res, err
	}
	var err error
	switch e := r.GetEnd().(type) {
	case *pb.Result_Complete:
		err = firstErr(
			func() error { return checkOutput("output", e.Complete.GetOutput()) },
			func() error { return checkPolicy("quarantine", e.Complete.GetQuarantine()) },
			func() error { _, err := checkInt32("seen", e.Complete.GetSeen(), 0); return err },
		)
	case *pb.Result_Fail:
		res.after, err = l.failure(e.Fail)
	case *pb.Result_Snooze:
		res.delay, err = checkDuration("delay", e.Snooze.GetDelay(), 0, task.DueWindow)
	default:
		err = bad("end", "no result: set one of complete, fail or snooze")
	}
	return res, err
}

// maxRetryAfter bounds the delay a worker may ask for before a retry.
const maxRetryAfter = 24 * time.Hour

// workerClasses are the classes a worker may report, for the messages
// that refuse the others.
const workerClasses = "ERROR_CLASS_UNCLASSIFIED, ERROR_CLASS_TRANSIENT, ERROR_CLASS_PERMANENT, " +
	"ERROR_CLASS_RESOURCE, ERROR_CLASS_AFTER or ERROR_CLASS_TIMEOUT " +
	"(ERROR_CLASS_UNCLASSIFIED lets the task's policy and poison detection decide)"

// failure checks a failure and returns the delay of class AFTER; it
// leaves the worker's policy in r's policy, as a string, whichever way
// it came. The
// class is required: were UNSPECIFIED read as UNCLASSIFIED, a worker that
// forgot the field would have its tasks dead-lettered as poison.
func (l limits) failure(r *pb.Failed) (time.Duration, error) {
	switch c := r.GetErrorClass(); c {
	case pb.ErrorClass_ERROR_CLASS_UNSPECIFIED:
		return 0, bad("error_class", "not set: want %s", workerClasses)
	case pb.ErrorClass_ERROR_CLASS_CANCELED:
		return 0, bad("error_class", "%v is what the server records for cancelled work, not a worker's class: want %s", c, workerClasses)
	default:
		if _, ok := pb.ErrorClass_name[int32(c)]; !ok {
			return 0, bad("error_class", "%d is not an error class: want %s", c, workerClasses)
		}
	}
	after, err := checkDuration("retry_after", r.GetRetryAfter(), 0, maxRetryAfter)
	if err != nil {
		return 0, err
	}
	if r.GetRetryAfter() != nil && r.GetErrorClass() != pb.ErrorClass_ERROR_CLASS_AFTER {
		return 0, bad("retry_after", "set with error_class %v: it is only for class ERROR_CLASS_AFTER", r.GetErrorClass())
	}
	if r.Policy, err = policyOf("", r.GetPolicy(), r.GetRetryPolicy()); err != nil {
		return 0, err
	}
	r.RetryPolicy = nil
	return after, firstErr(
		func() error { return checkOutput("message", r.GetMessage()) },
		func() error { return checkOutput("output", r.GetOutput()) },
		func() error { return checkText("signal", r.GetSignal()) },
		func() error { return checkName("catch", r.GetCatch(), "refund_order", false) },
		func() error {
			if r.GetCatch() == task.KindExec {
				return bad("catch", "a process task (kind exec) cannot be a remote worker's catch: catch with a kind of handler")
			}
			return nil
		},
	)
}

// quote quotes a value for a message, cut short if it is long.
func quote(s string) string {
	const most = 64
	if len(s) > most {
		cut := most
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func formatBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
