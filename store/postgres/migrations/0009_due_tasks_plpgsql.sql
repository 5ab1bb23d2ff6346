-- due_tasks in PL/pgSQL: a SQL function that cannot be inlined (it has
-- SET clauses) plans its query again at every call, which was two thirds
-- of a small claim's time in the database; PL/pgSQL keeps the plan for the
-- session. The query, its order and its SET clauses are as in 0007.
CREATE OR REPLACE FUNCTION due_tasks (lim bigint, queues text[], kinds text[], skip_groups text[], only_group text,
        skip_queues text[], skip_tenants text[], only_tenant text)
RETURNS TABLE (id bigint, priority integer, next_at timestamptz)
LANGUAGE plpgsql VOLATILE
SET enable_sort = off
SET search_path FROM CURRENT
AS $$
BEGIN
    RETURN QUERY
    SELECT t.id, t.priority, t.next_at FROM tasks t
    WHERE t.state IN ('READY', 'RETRYING', 'SENSING') AND t.next_at <= now()
        AND (queues IS NULL OR t.queue = ANY (queues))
        AND (kinds IS NULL OR t.kind = ANY (kinds))
        AND (skip_groups IS NULL OR t.group_name <> ALL (skip_groups))
        AND (only_group IS NULL OR t.group_name = only_group)
        AND (skip_queues IS NULL OR t.queue <> ALL (skip_queues))
        AND (skip_tenants IS NULL OR t.tenant <> ALL (skip_tenants))
        AND (only_tenant IS NULL OR t.tenant = only_tenant)
    ORDER BY t.priority DESC, t.next_at, t.id
    LIMIT lim
    FOR UPDATE OF t SKIP LOCKED;
END
$$;
