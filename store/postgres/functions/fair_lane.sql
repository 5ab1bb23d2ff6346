-- fair_lane is a lane's place in fair claims (docs/engine.md, "Fair
-- claims"): its base, after which its next tasks are stamped, and its
-- step, 1 ÷ the tenant's weight (1, store.DefaultWeight, without one). A
-- lane is a tenant's tasks of one queue and priority; its base is the
-- largest vt of its waiting tasks (tasks_lane) or, when it has none or
-- is behind, the clock of its queue and priority: the largest vt claimed
-- there (for a queue with no clock yet, the largest of the priority's).
-- A tenant that comes with nothing waiting takes its turn at once, after
-- what was claimed last, not after every task waiting before it.
--
-- The lane's tasks are stamped base + n × step, n from 1, in due order.
-- Enqueues (insertTasksSQL, copyTasks) and stamp_due read it, none
-- writes a row of a tenant's own: two transactions enqueueing for one
-- tenant at once may stamp alike, sharing turns, where a row per tenant
-- would make the second wait for the first's commit (a caller's whole
-- transaction, with EnqueueTx).
CREATE FUNCTION fair_lane (lane_queue text, lane_priority integer, lane_tenant text,
        OUT base double precision, OUT step double precision)
LANGUAGE plpgsql STABLE
SET search_path FROM CURRENT
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
BEGIN
    SELECT greatest(
        (SELECT max(t.vt) FROM tasks t
         WHERE t.queue = lane_queue AND t.priority = lane_priority AND t.tenant = lane_tenant
             AND t.state IN ('READY', 'RETRYING', 'SENSING') AND t.vt IS NOT NULL),
        coalesce((SELECT c.vt FROM fair_clocks c WHERE c.queue = lane_queue AND c.priority = lane_priority),
            (SELECT max(c.vt) FROM fair_clocks c WHERE c.priority = lane_priority), 0)),
        1.0 / coalesce((SELECT w.weight FROM tenant_weights w WHERE w.tenant = lane_tenant), 1)
    INTO base, step;
END
$$;
