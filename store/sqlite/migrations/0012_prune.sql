-- Retention (store.Pruner) deletes finished tasks oldest finished first,
-- a bounded round at a time, and must find them without reading every
-- task. SUCCESS tasks are found through tasks_success (0007), kind and
-- name at a time, so a success enters no new index; the other finished
-- states enter this one, which failures, cancels and skips alone touch,
-- never a claim or a success. A query uses it only when it repeats this
-- WHERE clause word for word (SQLite's rule for partial indexes).
CREATE INDEX tasks_finished ON tasks (state, finished_at)
    WHERE state IN ('FAILED', 'UPSTREAM_FAILED', 'SKIPPED', 'CANCELLED');

-- The largest run id ever handed out. A run's id is its rowid, which
-- SQLite hands out as one more than the largest in the table: once
-- pruning deleted the newest run, its id would be handed out again, and
-- a waiter on the pruned run would find another. Runs are inserted past
-- this mark, and pruning raises it to the runs it deletes.
CREATE TABLE run_ids (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    last INTEGER NOT NULL
);
INSERT INTO run_ids (one, last) SELECT 1, coalesce(max(id), 0) FROM runs;
