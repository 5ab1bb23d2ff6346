-- A plain success (no output, exit code, error or events) no longer writes
-- an attempts row: its attempt stays on the task row, as it was while it
-- ran (attempt, lease_token, lease_owner, started_at), and ends at
-- finished_at. A task row whose started_at is set holds an attempt that
-- has no row: the open one of a RUNNING task, or the last one of a SUCCESS
-- task. Every other ending still writes its row and clears started_at.
-- Nothing moves: rows written before keep their attempts rows. This
-- migration marks the schema, so that a grit that does not read attempts
-- this way refuses the store rather than losing sight of them.
COMMENT ON COLUMN tasks.started_at IS
    'start of the attempt held on this row: the open one (RUNNING) or a plain success''s (SUCCESS); NULL when none';
