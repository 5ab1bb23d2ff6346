-- Tasks belong to a tenant ("" for none); queues and tenants may have a
-- limit of running attempts across the fleet, which workers keep to by
-- counting after a claim and skipping, for a moment, what is at its limit.
ALTER TABLE tasks ADD COLUMN tenant text NOT NULL DEFAULT '';

CREATE TABLE limits (
    scope text    NOT NULL CHECK (scope IN ('queue', 'tenant')),
    name  text    NOT NULL,
    max   integer NOT NULL CHECK (max > 0),
    PRIMARY KEY (scope, name)
);

DROP FUNCTION due_tasks (bigint, text[], text[], text[], text);
CREATE FUNCTION due_tasks (lim bigint, queues text[], kinds text[], skip_groups text[], only_group text,
        skip_queues text[], skip_tenants text[], only_tenant text)
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
        AND (skip_queues IS NULL OR queue <> ALL (skip_queues))
        AND (skip_tenants IS NULL OR tenant <> ALL (skip_tenants))
        AND (only_tenant IS NULL OR tenant = only_tenant)
    ORDER BY priority DESC, next_at, id
    LIMIT lim
    FOR UPDATE SKIP LOCKED
$$;
