-- The two statements every task goes through, the claim and a batch of
-- plain successes, become PL/pgSQL functions whose queries are planned once
-- per connection. The store's connections plan every other statement with
-- its own arguments (plan_cache_mode=force_custom_plan), which for these
-- two took longer than running them when a batch held a few tasks, as it
-- does with a worker's default ten slots.
--
-- A plan made once must not depend on the table's statistics, which are
-- wrong in a new schema or after a burst: with sequential scans, hash
-- joins and merge joins priced out, the plans left are the claim index's
-- ordered walk (due_tasks) and primary key lookups, whatever the tables
-- hold. Joins between a statement's own small sets are written as lookups
-- too, so that no nested loop walks one set for each row of another.

ALTER FUNCTION due_tasks (bigint, text[], text[], text[], text, text[], text[], text)
    SET plan_cache_mode = force_generic_plan;

-- claim_tasks is the claim: due_tasks locks the first due tasks in claim
-- order, skipping those another claimer has locked; they move to RUNNING
-- under a new lease token, their attempts opening on the task row
-- (started_at), and are returned in claim order. The claim's transaction
-- commits without waiting for the disk; a token is the claim's time in
-- microseconds when that is larger than the old token plus one, so that a
-- claim lost in a crash is never reused (see claim.go).
CREATE FUNCTION claim_tasks (worker text, lease_us bigint, lim bigint, queues text[], kinds text[],
        skip_groups text[], only_group text, skip_queues text[], skip_tenants text[], only_tenant text)
RETURNS SETOF tasks
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY
    WITH due AS (
        SELECT * FROM due_tasks(lim, queues, kinds, skip_groups, only_group, skip_queues, skip_tenants, only_tenant)
    ), claimed AS (
        UPDATE tasks t SET state = 'RUNNING', lease_owner = worker,
            lease_token = greatest(t.lease_token + 1, (extract(epoch FROM now()) * 1000000)::bigint),
            lease_expires = now() + lease_us * interval '1 microsecond', attempt = t.attempt + 1,
            first_started_at = coalesce(t.first_started_at, now()), started_at = now(), next_at = NULL
        FROM due
        WHERE t.id = due.id
        RETURNING t AS claimed_task, due.priority AS due_priority, due.next_at AS due_at
    )
    SELECT (c.claimed_task).* FROM claimed c
    ORDER BY c.due_priority DESC, c.due_at, (c.claimed_task).id;
END
$$;

-- succeed_alone records a batch of plain successes of tasks in no run, each
-- only while its task is RUNNING under the attempt's lease token: the
-- attempt stays on the task row, which finished_at ends. A task whose
-- attempt has a row (started_at NULL: it was rescued, then succeeded) gets
-- that row's delay and decision cleared. It returns the tasks that moved,
-- with run 0, and, untouched, the tasks of the batch that are in a run,
-- with run -1, which the caller records in a transaction of their own.
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
        RETURNING t.id, t.started_at
    ), rescued AS (
        UPDATE attempts a SET delay_ns = 0, decision = ''
        FROM moved m
        WHERE m.started_at IS NULL AND a.task_id = m.id
            AND a.lease_token = (SELECT max(y.lease_token) FROM attempts y WHERE y.task_id = m.id)
    )
    SELECT m.id, 0::bigint FROM moved m
    UNION ALL
    SELECT x.id, -1::bigint FROM f JOIN tasks x ON x.id = f.id
    WHERE x.run_id IS NOT NULL;
END
$$;
