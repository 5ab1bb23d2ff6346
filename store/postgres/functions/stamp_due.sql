-- stamp_due stamps, for fair claims, up to lim waiting tasks that came due
-- without a stamp (a retry, a snooze, a scheduled task, a dependent made
-- ready, a task given back or run anew), in due order, each lane's after
-- its base (fair_lane): a task takes its turn from the time it is due, so
-- a tenant's retries do not jump the queue. It skips the tasks another
-- claim is stamping. claim_tasks calls it first; when nothing came due it
-- costs one look at tasks_unstamped.
CREATE FUNCTION stamp_due (lim bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
BEGIN
    WITH due AS (
        SELECT d.id, d.queue, d.priority, d.tenant,
            row_number() OVER (PARTITION BY d.queue, d.priority, d.tenant ORDER BY d.next_at, d.id) AS n
        FROM (SELECT u.id, u.queue, u.priority, u.tenant, u.next_at FROM tasks u
              WHERE u.state IN ('READY', 'RETRYING', 'SENSING') AND u.vt IS NULL AND u.next_at <= now()
              ORDER BY u.next_at, u.id
              LIMIT lim
              FOR UPDATE SKIP LOCKED) d
    ), lanes AS (
        SELECT l.queue, l.priority, l.tenant, f.base, f.step
        FROM (SELECT DISTINCT due.queue, due.priority, due.tenant FROM due) l
            CROSS JOIN LATERAL fair_lane(l.queue, l.priority, l.tenant) f
    )
    UPDATE tasks t SET vt = l.base + due.n * l.step
    FROM due JOIN lanes l ON l.queue = due.queue AND l.priority = due.priority AND l.tenant = due.tenant
    WHERE t.id = due.id;
END
$$;
