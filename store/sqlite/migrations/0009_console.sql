-- The dashboard's reads, each answered from an index on a store of
-- millions of tasks, and the operators' audit log.
--
-- Lists by state, newest first (the dead letters, the failures, the
-- retries): a page walks this index backward from its keyset and stops
-- at its size. The states of the hot path (READY, RUNNING, SUCCESS) are
-- left out, so a claim or a success never touches it (a whole index on
-- state cost the hot path 15-25% of its throughput and was dropped). A
-- query uses it only when it repeats this WHERE clause word for word
-- (SQLite's rule for partial indexes): the driver adds it to a state
-- filter that stays within these states (offPathStates).
CREATE INDEX tasks_state_id ON tasks (state, id)
    WHERE state IN ('PENDING', 'RETRYING', 'SENSING', 'FAILED', 'UPSTREAM_FAILED', 'DEAD_LETTER', 'SKIPPED', 'CANCELLED');

-- AttemptSeries counts the attempts that ended in a window by outcome:
-- successes from tasks_success (which holds SUCCESS tasks alone, as the
-- PostgreSQL store must: there a plain success writes no attempts row),
-- the other endings through this index. An attempt enters it when it is
-- closed with an outcome other than SUCCESS: the open attempts of claims
-- and the successes never do.
CREATE INDEX attempts_ended ON attempts (ended_at) WHERE outcome NOT IN ('RUNNING', 'SUCCESS');

-- What operators did, from the dashboard or the CLI: appended, never
-- changed. The triggers refuse an update or a delete, so an entry read
-- is an entry written.
CREATE TABLE audit (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    at     INTEGER NOT NULL,
    who    TEXT    NOT NULL,
    action TEXT    NOT NULL,
    target TEXT    NOT NULL DEFAULT '',
    count  INTEGER NOT NULL DEFAULT 0,
    detail TEXT    NOT NULL DEFAULT ''
);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'grit audit log is append-only: UPDATE refused');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'grit audit log is append-only: DELETE refused');
END;
