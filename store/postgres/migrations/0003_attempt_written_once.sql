-- An attempt's row is written once, when it ends, instead of being opened
-- by the claim and closed by the finish: one row write less per attempt on
-- the hot path. While it runs, the attempt is the task row itself
-- (attempt, lease_token, lease_owner) and this column, the start of the
-- open attempt; NULL when none is open, including after a rescue, which
-- writes the interrupted attempt's row.
ALTER TABLE tasks ADD COLUMN started_at timestamptz;

-- Attempts opened under the old scheme move to the task row.
UPDATE tasks t SET started_at = a.started_at
FROM attempts a
WHERE t.state = 'RUNNING' AND a.task_id = t.id AND a.lease_token = t.lease_token AND a.outcome = 'RUNNING';
DELETE FROM attempts a USING tasks t
WHERE a.outcome = 'RUNNING' AND a.task_id = t.id AND a.lease_token = t.lease_token AND t.started_at IS NOT NULL;
