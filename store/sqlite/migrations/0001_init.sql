-- grit's first schema. Times are INTEGER unix microseconds (UTC), durations
-- INTEGER nanoseconds, states the upper-case names of task.State.

CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    name         TEXT    NOT NULL,
    key          TEXT,                       -- idempotency key; NULL for none
    max_failures INTEGER NOT NULL DEFAULT 0, -- 0: no limit
    state        TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    finished_at  INTEGER
);
CREATE INDEX runs_key ON runs (key) WHERE key IS NOT NULL;

CREATE TABLE tasks (
    id               INTEGER PRIMARY KEY,
    run_id           INTEGER REFERENCES runs (id),
    name             TEXT    NOT NULL DEFAULT '',
    kind             TEXT    NOT NULL,
    args             BLOB,
    queue            TEXT    NOT NULL,
    group_name       TEXT    NOT NULL DEFAULT '',
    priority         INTEGER NOT NULL DEFAULT 0,
    state            TEXT    NOT NULL,
    policy           TEXT    NOT NULL DEFAULT '',
    poison_after     INTEGER NOT NULL DEFAULT 0,
    timeout          INTEGER NOT NULL DEFAULT 0,
    grace            INTEGER NOT NULL DEFAULT 0,
    attempt          INTEGER NOT NULL DEFAULT 0,
    next_at          INTEGER,                    -- the due time of a waiting task
    prev_delay       INTEGER NOT NULL DEFAULT 0,
    lease_owner      TEXT    NOT NULL DEFAULT '',
    lease_token      INTEGER NOT NULL DEFAULT 0, -- only ever grows
    lease_expires    INTEGER,
    last_error       TEXT    NOT NULL DEFAULT '',
    fingerprint      TEXT    NOT NULL DEFAULT '',
    streak           INTEGER NOT NULL DEFAULT 0,
    idempotency_key  TEXT,
    needs_left       INTEGER NOT NULL DEFAULT 0, -- needs not yet SUCCESS or SKIPPED
    created_at       INTEGER NOT NULL,
    first_started_at INTEGER,
    finished_at      INTEGER
);
-- Every index is paid for by every claim and finish that moves a task in or
-- out of it, so there are few, and mostly partial: a task on the hot path
-- (READY, RUNNING, SUCCESS) touches tasks_claim, tasks_due and
-- tasks_lease_expires only.
--
-- The claim query walks this index in claim order and stops at its limit.
CREATE INDEX tasks_claim ON tasks (priority DESC, next_at, id, queue, kind)
    WHERE state IN ('READY', 'RETRYING', 'SENSING');
-- NextDue: the earliest due time, in queues and kinds.
CREATE INDEX tasks_due ON tasks (next_at, queue, kind)
    WHERE state IN ('READY', 'RETRYING', 'SENSING');
-- Run bookkeeping: does the run have open tasks, failed ones.
CREATE INDEX tasks_run ON tasks (run_id, state) WHERE run_id IS NOT NULL;
-- Rescue: expired leases; the leases of a dead owner (RUNNING tasks are
-- few, so scanning this index for an owner is cheap).
CREATE INDEX tasks_lease_expires ON tasks (lease_expires) WHERE state = 'RUNNING';
CREATE UNIQUE INDEX tasks_idempotency_key ON tasks (idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- An edge says to_task needs from_task.
CREATE TABLE edges (
    run_id    INTEGER NOT NULL REFERENCES runs (id),
    from_task INTEGER NOT NULL REFERENCES tasks (id),
    to_task   INTEGER NOT NULL REFERENCES tasks (id),
    PRIMARY KEY (from_task, to_task)
) WITHOUT ROWID;
CREATE INDEX edges_to ON edges (to_task, from_task);
CREATE INDEX edges_run ON edges (run_id);

-- One row per claim of a task. lease_token identifies the claim: the attempt
-- number alone repeats when an attempt is refunded (a snooze, a release).
CREATE TABLE attempts (
    task_id     INTEGER NOT NULL REFERENCES tasks (id),
    lease_token INTEGER NOT NULL,
    number      INTEGER NOT NULL,
    worker      TEXT    NOT NULL,
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER,
    outcome     TEXT    NOT NULL,
    class       TEXT    NOT NULL DEFAULT '',
    error       TEXT    NOT NULL DEFAULT '',
    fingerprint TEXT    NOT NULL DEFAULT '',
    exit_code   INTEGER,
    signal      TEXT    NOT NULL DEFAULT '',
    output      TEXT    NOT NULL DEFAULT '',
    delay       INTEGER NOT NULL DEFAULT 0,
    decision    TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (task_id, lease_token)
);

CREATE TABLE workers (
    id         TEXT    PRIMARY KEY,
    host       TEXT    NOT NULL DEFAULT '',
    pid        INTEGER NOT NULL DEFAULT 0,
    version    TEXT    NOT NULL DEFAULT '',
    started_at INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL,
    active     INTEGER NOT NULL DEFAULT 1
) WITHOUT ROWID;
