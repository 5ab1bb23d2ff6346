-- An attempt lives on its task row until it ends: a claim writes the task
-- row alone (attempt, lease_token, lease_owner and this column, the start
-- of the attempt), and the attempt's own row is written once, when it
-- ends, from the task row as it was. A plain success (no output, exit
-- code, error, timeout of its own or events) writes no attempts row at
-- all: its attempt stays on the task row and ends at finished_at. So a
-- task row whose started_at is set holds an attempt that has no row: the
-- open one of a RUNNING task, or the last one of a SUCCESS task. Every
-- other ending writes its row and clears started_at, and so does a
-- rescue, which writes the interrupted attempt's row. A claim and a
-- finish write two rows instead of four.
--
-- Rows written before keep their attempts rows, finished tasks' and all.
-- The one exception is an attempt still open (a RUNNING row under its
-- task's lease token): it moves to the task row, so that its finish
-- writes its row once instead of leaving the open one behind. Both
-- statements go through the RUNNING tasks (tasks_lease_expires) and the
-- attempts' key, so the upgrade reads none of a large store's finished
-- tasks and attempts. Being recorded, this migration marks the schema: a
-- grit that does not read attempts this way refuses the store rather
-- than losing sight of them.
ALTER TABLE tasks ADD COLUMN started_at INTEGER;

UPDATE tasks SET started_at = (
    SELECT a.started_at FROM attempts a
    WHERE a.task_id = tasks.id AND a.lease_token = tasks.lease_token AND a.outcome = 'RUNNING')
WHERE state = 'RUNNING';
DELETE FROM attempts
WHERE (task_id, lease_token) IN (
    SELECT id, lease_token FROM tasks WHERE state = 'RUNNING' AND started_at IS NOT NULL)
    AND outcome = 'RUNNING';
