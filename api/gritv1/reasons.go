package gritv1

// ErrorDomain is the domain of the google.rpc.ErrorInfo every error of a
// grit server carries.
const ErrorDomain = "grit"

// The reasons of the google.rpc.ErrorInfo every error of a grit server
// carries, beside its code and message: what a program decides on, so
// that it never parses a message. docs/api.md says when each comes, what
// its metadata holds, and what a client should do. They are constants
// here, not a proto enum, because a client in another language reads the
// reason as the string it is; their spelling is the contract.
const (
	// ReasonInvalidArgument: the request is malformed (INVALID_ARGUMENT,
	// with a google.rpc.BadRequest naming the field).
	ReasonInvalidArgument = "INVALID_ARGUMENT"
	// ReasonBatchTooLarge: a repeated field has more items than the
	// server's batch limit (INVALID_ARGUMENT).
	ReasonBatchTooLarge = "BATCH_TOO_LARGE"
	// ReasonPayloadTooLarge: args, a payload or a step's result is over
	// the server's payload limit (INVALID_ARGUMENT).
	ReasonPayloadTooLarge = "PAYLOAD_TOO_LARGE"
	// ReasonMessageTooLarge: the request is larger than the server's
	// receive limit, and was not read (INVALID_ARGUMENT, with the limit in
	// bytes): split it.
	ReasonMessageTooLarge = "MESSAGE_TOO_LARGE"

	// ReasonTokenMissing, ReasonTokenMalformed, ReasonTokenUnknown: the
	// caller has not proved who it is (UNAUTHENTICATED).
	ReasonTokenMissing   = "TOKEN_MISSING"
	ReasonTokenMalformed = "TOKEN_MALFORMED"
	ReasonTokenUnknown   = "TOKEN_UNKNOWN"
	// ReasonTokenReadOnly: a read-only token called a method that
	// changes something (PERMISSION_DENIED).
	ReasonTokenReadOnly = "TOKEN_READ_ONLY"
	// ReasonTokenNoExec: a token without the right exec asked to enqueue
	// a process task (kind exec) (PERMISSION_DENIED).
	ReasonTokenNoExec = "TOKEN_NO_EXEC"
	// ReasonServerBusy: the server has as many calls in flight as its
	// limit (RESOURCE_EXHAUSTED); retry after a backoff.
	ReasonServerBusy = "SERVER_BUSY"

	// ReasonLeaseLost: the lease token is not the task's current one
	// (FAILED_PRECONDITION); stop working the task.
	ReasonLeaseLost = "LEASE_LOST"
	// ReasonLeaseHeldByOther: the lease is held, or was, by another
	// worker than the one reporting (FAILED_PRECONDITION).
	ReasonLeaseHeldByOther = "LEASE_HELD_BY_OTHER"
	// ReasonWrongState: the task is not in a state that allows the
	// operation (FAILED_PRECONDITION).
	ReasonWrongState = "WRONG_STATE"
	// ReasonResultRefused: the store's database refused to record this
	// result (a trigger, a constraint), while it recorded the others of
	// the report (FAILED_PRECONDITION); the lease is still the worker's.
	ReasonResultRefused = "RESULT_REFUSED"

	// ReasonTaskNotFound, ReasonRunNotFound, ReasonInstanceNotFound: no
	// task has the id, no run, no state machine instance the machine and
	// key (NOT_FOUND); ReasonNotFound: something else the request named
	// is not there.
	ReasonTaskNotFound     = "TASK_NOT_FOUND"
	ReasonRunNotFound      = "RUN_NOT_FOUND"
	ReasonInstanceNotFound = "INSTANCE_NOT_FOUND"
	ReasonNotFound         = "NOT_FOUND"
	// ReasonIdempotencyKeyConflict: the idempotency key names a task of
	// other work (ALREADY_EXISTS).
	ReasonIdempotencyKeyConflict = "IDEMPOTENCY_KEY_CONFLICT"
	// ReasonAlreadyExists: what the request would make exists already
	// (ALREADY_EXISTS).
	ReasonAlreadyExists = "ALREADY_EXISTS"

	// ReasonStoreUnsupported: the server's store lacks what the call
	// needs: pauses, state machines (UNIMPLEMENTED).
	ReasonStoreUnsupported = "STORE_UNSUPPORTED"
	// ReasonStoreUnavailable: the server could not reach its store
	// (UNAVAILABLE); retry after a backoff.
	ReasonStoreUnavailable = "STORE_UNAVAILABLE"
	// ReasonStoreFull: the store's disk is full (SQLite's file system,
	// PostgreSQL's disk_full) (UNAVAILABLE); retry after a backoff: the
	// same call succeeds once space is freed.
	ReasonStoreFull = "STORE_FULL"
	// ReasonDeadlineExceeded, ReasonCancelled: the call's own deadline
	// passed, or its caller cancelled it, while the server worked it.
	ReasonDeadlineExceeded = "DEADLINE_EXCEEDED"
	ReasonCancelled        = "CANCELLED"
	// ReasonInternal: the server failed (INTERNAL); its log says why.
	ReasonInternal = "INTERNAL"
)
