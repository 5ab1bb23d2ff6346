-- Retention (store.Pruner) deletes finished tasks oldest finished first,
-- a bounded round at a time, and must find them without reading every
-- task. SUCCESS tasks are found through tasks_success (0016), kind and
-- name at a time, so a success enters no new index; the other finished
-- states enter this one, which failures, cancels and skips alone touch,
-- never a claim or a success.
--
-- Building it takes a lock that holds back writes to tasks while it reads
-- the table once: on a store of millions of tasks, migrate
-- (postgres.Migrate) at a quiet moment.
CREATE INDEX tasks_finished ON tasks (state, finished_at)
    WHERE state IN ('FAILED', 'UPSTREAM_FAILED', 'SKIPPED', 'CANCELLED');
