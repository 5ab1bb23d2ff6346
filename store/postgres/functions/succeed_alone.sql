-- succeed_alone records a batch of plain successes of tasks in no run, each
-- only while its task is RUNNING under the attempt's lease token: the
-- attempt stays on the task row, which finished_at ends. A task whose
-- attempt has a row (started_at NULL: it was rescued, then succeeded) gets
-- that row's delay and decision cleared. It is planned once per
-- connection, its plan pinned to primary key lookups, for the reasons
-- claim_tasks gives. It returns only the tasks it moved, with run 0: the
-- caller hands every other item of the batch (a task in a run, or a lost
-- lease, which is rare) to the finish transaction, which tells them
-- apart, rather than have this function look every task of the batch up
-- a second time. A task that another awaits (awaited) is left to the
-- finish transaction too, which wakes what awaits it.
CREATE FUNCTION succeed_alone (ids bigint[], tokens bigint[], ended timestamptz[])
RETURNS TABLE (moved_id bigint, moved_run bigint)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET search_path FROM CURRENT
AS $$
BEGIN
    RETURN QUERY
    WITH f AS (
        SELECT * FROM unnest(ids, tokens, ended) AS f (id, token, ended_at)
    ), moved AS (
        UPDATE tasks t SET state = 'SUCCESS', next_at = NULL, finished_at = coalesce(f.ended_at, now()),
            last_error = '', fingerprint = '', streak = 0, prev_delay_ns = 0, lease_expires = NULL
        FROM f
        WHERE t.id = f.id AND CASE t.state WHEN 'RUNNING' THEN t.lease_token = f.token END AND t.run_id IS NULL
            AND NOT t.awaited
        RETURNING t.id, t.started_at
    ), rescued AS (
        UPDATE attempts a SET delay_ns = 0, decision = ''
        FROM moved m
        WHERE m.started_at IS NULL AND a.task_id = m.id
            AND a.lease_token = (SELECT max(y.lease_token) FROM attempts y WHERE y.task_id = m.id)
    )
    SELECT m.id, 0::bigint FROM moved m;
END
$$;
