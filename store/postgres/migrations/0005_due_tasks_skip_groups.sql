-- due_tasks skips the groups whose breaker is open (their tasks wait, and
-- use no attempt, until it lets them through), or takes the tasks of one
-- group only (a breaker's probe). See 0001 for why this is a function.
DROP FUNCTION due_tasks (bigint, text[], text[]);
CREATE FUNCTION due_tasks (lim bigint, queues text[], kinds text[], skip_groups text[], only_group text)
RETURNS TABLE (id bigint, priority integer, next_at timestamptz)
LANGUAGE sql VOLATILE
SET enable_sort = off
SET search_path FROM CURRENT
AS $$
    SELECT id, priority, next_at FROM tasks
    WHERE state IN ('READY', 'RETRYING', 'SENSING') AND next_at <= now()
        AND (queues IS NULL OR queue = ANY (queues))
        AND (kinds IS NULL OR kind = ANY (kinds))
        AND (skip_groups IS NULL OR group_name <> ALL (skip_groups))
        AND (only_group IS NULL OR group_name = only_group)
    ORDER BY priority DESC, next_at, id
    LIMIT lim
    FOR UPDATE SKIP LOCKED
$$;
