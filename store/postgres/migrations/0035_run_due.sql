-- A run's claim (claim_run_tasks) finds the run's due tasks by due time:
-- it reads only those due, however many of the run's tasks wait for a
-- retry, a snooze or their time, where tasks_run (run_id, state) gave it
-- every waiting task of the run to filter. Only the tasks of runs have an
-- entry, and only while they wait.
CREATE INDEX tasks_run_due ON tasks (run_id, next_at)
    WHERE run_id IS NOT NULL AND state IN ('READY', 'RETRYING', 'SENSING');
