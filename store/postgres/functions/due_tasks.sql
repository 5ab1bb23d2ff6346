-- due_tasks locks, and returns in claim order, up to lim due tasks in the
-- given queues and kinds (NULL: all), skipping those another transaction
-- has locked. It skips the groups whose breaker is open (skip_groups:
-- their tasks wait, and use no attempt, until it lets them through) and
-- the queues and tenants at their limit; only_group and only_tenant take
-- the tasks of one group (a breaker's probe) or one tenant alone. It
-- leaves out the paused queues, kinds and tenants (paused), whatever the
-- caller's skip lists say. claim_tasks calls it. Claim order is priority,
-- then fair turns across tenants: the tasks' stamps, vt (fair_lane,
-- stamp_due); a task has one only once due (next_at <= now() is kept for
-- a task whose due time an operator moved, which loses its stamp too).
--
-- It lives here, not in the Go code, for its SET clauses: with sorting
-- off, the only plan left walks tasks_fair in claim order and stops at
-- lim. Left to its statistics, the planner sorts every due task whenever
-- it believes few are due (a new table, a burst into a history of
-- finished tasks), and the claim then costs the whole backlog. It is
-- PL/pgSQL: a SQL function that cannot be inlined (it has SET clauses)
-- plans its query again at every call, which was two thirds of a small
-- claim's time in the database, where PL/pgSQL keeps a plan, made once
-- (force_generic_plan), for the session.
CREATE FUNCTION due_tasks (lim bigint, queues text[], kinds text[], skip_groups text[], only_group text,
        skip_queues text[], skip_tenants text[], only_tenant text)
RETURNS TABLE (id bigint, priority integer, next_at timestamptz, vt double precision, queue text)
LANGUAGE plpgsql VOLATILE
SET enable_sort = off
SET search_path FROM CURRENT
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    skip_kinds text[] := paused('kind');
BEGIN
    skip_queues := skip_queues || paused('queue');
    skip_tenants := skip_tenants || paused('tenant');
    RETURN QUERY
    SELECT t.id, t.priority, t.next_at, t.vt, t.queue FROM tasks t
    WHERE t.state IN ('READY', 'RETRYING', 'SENSING') AND t.vt IS NOT NULL AND t.next_at <= now()
        AND (queues IS NULL OR t.queue = ANY (queues))
        AND (kinds IS NULL OR t.kind = ANY (kinds))
        AND (skip_kinds IS NULL OR t.kind <> ALL (skip_kinds))
        AND (skip_groups IS NULL OR t.group_name <> ALL (skip_groups))
        AND (only_group IS NULL OR t.group_name = only_group)
        AND (skip_queues IS NULL OR t.queue <> ALL (skip_queues))
        AND (skip_tenants IS NULL OR t.tenant <> ALL (skip_tenants))
        AND (only_tenant IS NULL OR t.tenant = only_tenant)
    ORDER BY t.priority DESC, t.vt, t.id
    LIMIT lim
    FOR UPDATE OF t SKIP LOCKED;
END
$$;
