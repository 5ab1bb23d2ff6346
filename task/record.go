package task

import (
	"encoding/json"
	"time"
)

// Task is one unit of work, as the store keeps it.
type Task struct {
	ID     int64           `json:"id"`
	RunID  int64           `json:"run_id,omitempty"`
	Name   string          `json:"name,omitempty"` // unique within its run
	Kind   string          `json:"kind"`           // which handler runs it; "exec" for process tasks
	Args   json.RawMessage `json:"args,omitempty"`
	Queue  string          `json:"queue"`
	Group  string          `json:"group,omitempty"`  // the downstream it calls
	Tenant string          `json:"tenant,omitempty"` // whose work it is, for per-tenant limits
	// Origin is where the task came from (OriginAPI, FileOrigin(host), or
	// "" for code with the store's own credentials): a worker runs a
	// process task from elsewhere than its own host's task files only if
	// it allows it (see Exec).
	Origin   string `json:"origin,omitempty"`
	Priority int    `json:"priority,omitempty"`
	State    State  `json:"state"`

	// Policy is the retry policy in retry.Parse's grammar; "" means the
	// handler's or the default.
	Policy      string        `json:"policy,omitempty"`
	PoisonAfter int           `json:"poison_after,omitempty"` // 0: the policy's
	Timeout     time.Duration `json:"timeout,omitempty"`      // 0: none; AutoTimeout: learned
	Grace       time.Duration `json:"grace,omitempty"`        // SIGTERM to SIGKILL; 0: 5s

	Attempt int `json:"attempt"` // attempts started
	// NextAt is when a waiting task may run; on a task a claim returns,
	// when it became due (the claim clears it on the stored task).
	NextAt    time.Time     `json:"next_at,omitzero"`
	PrevDelay time.Duration `json:"prev_delay,omitzero"` // the delay chosen before the current attempt

	LeaseOwner   string    `json:"lease_owner,omitempty"`
	LeaseToken   int64     `json:"lease_token,omitempty"`
	LeaseExpires time.Time `json:"lease_expires,omitzero"`

	LastError   string `json:"error,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Streak      int    `json:"streak,omitempty"` // failures in a row with Fingerprint
	// Deferrals counts the attempts that ended in resource pressure and
	// were deferred; they are not counted in Attempt (see retry.Policy).
	Deferrals int `json:"deferrals,omitempty"`
	// Snoozes counts the attempts that ended in a snooze (SENSING): given
	// back, they are not counted in Attempt, so a sensor tells from this
	// whether it looked before.
	Snoozes int `json:"snoozes,omitempty"`
	// Waits counts the claims given back before their attempt began: a
	// group's retry budget was spent, a limit was reached, a hold or a
	// pause stood. They are neither attempts nor in the attempt history.
	Waits int `json:"waits,omitempty"`

	IdempotencyKey string    `json:"idempotency_key,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	FirstStartedAt time.Time `json:"first_started_at,omitzero"`
	FinishedAt     time.Time `json:"finished_at,omitzero"`

	// Trace is the W3C traceparent of the span that enqueued the task
	// ("" when it was not traced), and AttemptTrace that of its last
	// attempt that ended: the span of each attempt links to both.
	Trace        string `json:"trace,omitempty"`
	AttemptTrace string `json:"attempt_trace,omitempty"`

	// Result is the JSON its handler set last (grit.SetResult), at most
	// MaxResult bytes; nil when none did. A read of one task (GetTask)
	// holds it; lists of tasks leave it out, as it may be large.
	Result json.RawMessage `json:"result,omitempty"`
}

// Outcome is how an attempt ended.
type Outcome string

const (
	OutcomeRunning     Outcome = "RUNNING"     // not ended yet
	OutcomeSuccess     Outcome = "SUCCESS"     // the work succeeded
	OutcomeError       Outcome = "ERROR"       // the work failed
	OutcomeTimeout     Outcome = "TIMEOUT"     // the executor cut it off
	OutcomeSnoozed     Outcome = "SNOOZED"     // a sensor asked to be woken later
	OutcomeInterrupted Outcome = "INTERRUPTED" // its worker died or lost the lease
	OutcomeReleased    Outcome = "RELEASED"    // given back on a graceful stop; not counted
)

// Attempt is one execution of a task.
type Attempt struct {
	TaskID      int64         `json:"task_id"`
	Number      int           `json:"number"`
	Worker      string        `json:"worker"`
	LeaseToken  int64         `json:"lease_token"`
	StartedAt   time.Time     `json:"started_at"`
	EndedAt     time.Time     `json:"ended_at,omitzero"`
	Outcome     Outcome       `json:"outcome"`
	Class       string        `json:"class,omitempty"` // the error's retry class
	Error       string        `json:"error,omitempty"`
	Fingerprint string        `json:"fingerprint,omitempty"`
	ExitCode    *int          `json:"exit_code,omitempty"`
	Signal      string        `json:"signal,omitempty"`
	Output      string        `json:"output,omitempty"` // tail of stdout and stderr
	Delay       time.Duration `json:"delay,omitempty"`  // chosen before the next attempt
	Decision    string        `json:"decision,omitempty"`
	// Timeout is the attempt's timeout when it was learned (AutoTimeout),
	// and TimeoutSource how it was chosen ("auto: 5 × p99 2m of 140 runs",
	// "auto: default, 3 runs so far"); zero and "" for a fixed timeout,
	// which is the task's (or its handler's).
	Timeout       time.Duration `json:"timeout,omitempty"`
	TimeoutSource string        `json:"timeout_source,omitempty"`
}

// Run is a set of tasks with dependencies, submitted together.
type Run struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Key         string    `json:"key,omitempty"`          // idempotency key: the same key is the same run
	MaxFailures int       `json:"max_failures,omitempty"` // 0: no limit
	State       State     `json:"state"`                  // RUNNING until it ends, then SUCCESS, FAILED or CANCELLED
	CreatedAt   time.Time `json:"created_at"`
	FinishedAt  time.Time `json:"finished_at,omitzero"`
}

// Worker is a process that claims tasks.
type Worker struct {
	ID        string    `json:"id"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Version   string    `json:"version,omitempty"`
	StartedAt time.Time `json:"started_at"`
	LastSeen  time.Time `json:"last_seen"`
	Active    bool      `json:"active"`
	// The worker's last failed claim, as it last reported: the error, when,
	// and how many claims in a row had failed then (0 once it claims again).
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	Failures    int       `json:"failures,omitempty"`
	// Kinds are the kinds the worker serves (its handlers', or those a
	// remote worker claims), sorted.
	Kinds []string `json:"kinds,omitempty"`
}

// Alive reports whether the worker is alive at now: active, and heard
// from within lease (a worker that died is silent, and stays active
// until a live one takes its tasks over).
func (w Worker) Alive(now time.Time, lease time.Duration) bool {
	return w.Active && now.Sub(w.LastSeen) <= lease
}
