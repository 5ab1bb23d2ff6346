-- The dashboard's reads, each answered from an index on a store of
-- millions of tasks, and the operators' audit log.
--
-- Building the two indexes takes a lock that holds back writes to tasks
-- and attempts while each table is read once: on a store of millions of
-- tasks, migrate (postgres.Migrate) at a quiet moment.
--
-- Lists by state, newest first (the dead letters, the failures, the
-- retries): the dashboard walks this index backward from its page's
-- keyset (state = s AND id < before) and stops at the page's size. The
-- states of the hot path (READY, RUNNING, SUCCESS) are left out, so a
-- claim or a success never touches it; a list of those walks the primary
-- key (they are most tasks, so a page is found at once) or, for RUNNING
-- and READY, the indexes that already hold them. DeadLetterGroups reads
-- the dead letters through it too.
CREATE INDEX tasks_state_id ON tasks (state, id)
    WHERE state IN ('PENDING', 'RETRYING', 'SENSING', 'FAILED', 'UPSTREAM_FAILED', 'DEAD_LETTER', 'SKIPPED', 'CANCELLED');

-- AttemptSeries counts the attempts that ended in a window by outcome.
-- Successes are counted from tasks_success (a plain success writes no
-- attempts row, see 0008), so this index holds the other endings alone:
-- an attempts row is written only when its attempt ends, and a success
-- with a row of its own never enters it.
CREATE INDEX attempts_ended ON attempts (ended_at) WHERE outcome NOT IN ('RUNNING', 'SUCCESS');

-- What operators did, from the dashboard or the CLI: appended, never
-- changed: a trigger refuses an update or a delete, so an entry read is
-- an entry written (functions/audit_append_only.sql).
CREATE TABLE audit (
    id     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at     timestamptz NOT NULL DEFAULT now(),
    who    text        NOT NULL,
    action text        NOT NULL,
    target text        NOT NULL DEFAULT '',
    count  integer     NOT NULL DEFAULT 0,
    detail text        NOT NULL DEFAULT ''
);
