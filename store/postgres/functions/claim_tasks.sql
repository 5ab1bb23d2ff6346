-- claim_tasks is the claim: stamp_due stamps the tasks that came due
-- since the last claim, for their fair turn (called only when there are
-- some: the call costs more than the look at tasks_unstamped); due_tasks locks the first due
-- tasks in claim order, skipping those another claimer has locked; they move to RUNNING
-- under new lease tokens, their attempts opening on the task row
-- (started_at), and come back with the time they became due (in next_at,
-- which the claim clears on the row). The claim's transaction commits
-- without waiting for the disk; its tokens come from the lease_tokens
-- sequence, moved past the server's start first (lease_tokens_past_start),
-- so that a claim lost in a crash is never reused (see claim.go).
--
-- The claim and a batch of plain successes (succeed_alone), which every
-- task goes through, are PL/pgSQL functions whose queries are planned once
-- per connection. The store's connections plan every other statement with
-- its own arguments (plan_cache_mode=force_custom_plan), which for these
-- two took longer than running them when a batch held a few tasks, as it
-- does with a worker's default ten slots. A plan made once must not depend
-- on the table's statistics, which are wrong in a new schema or after a
-- burst: with sequential scans, hash joins and merge joins priced out, the
-- plans left are the claim index's ordered walk (due_tasks) and primary
-- key lookups, whatever the tables hold.
--
-- Each row comes straight from the UPDATE, unsorted, with its place in
-- claim order (ord, from 1: due_tasks's rows, which come in claim order,
-- numbered WITH ORDINALITY), and the store puts the rows in place as it
-- reads them: sorting them here copied every row twice, a tenth of the
-- claim's time in the database. A place can be missing: due_tasks can
-- lock a task committed after the UPDATE took its snapshot, which the
-- UPDATE does not see; the task stays due for the next claim. The rows are
-- of the type claimed_task, which the numbered migrations keep, not of
-- tasks: a column added to tasks does not break the claim, and one the
-- claim returns is added to claimed_task and to the RETURNING list here
-- (and in claim_run_tasks), in the type's order.
CREATE FUNCTION claim_tasks (worker text, lease_us bigint, lim bigint, queues text[], kinds text[],
        skip_groups text[], only_group text, skip_queues text[], skip_tenants text[], only_tenant text,
        stamp_lim bigint)
RETURNS SETOF claimed_task
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM lease_tokens_past_start();
    IF EXISTS (SELECT FROM tasks u WHERE u.state IN ('READY', 'RETRYING', 'SENSING') AND u.vt IS NULL
            AND u.next_at <= now()) THEN
        PERFORM stamp_due(stamp_lim);
    END IF;
    RETURN QUERY
    WITH due AS (
        SELECT * FROM due_tasks(lim, queues, kinds, skip_groups, only_group, skip_queues, skip_tenants, only_tenant)
            WITH ORDINALITY AS d (id, priority, next_at, vt, queue, ord)
    ), clock AS (
        INSERT INTO fair_clocks AS c (queue, priority, vt)
        SELECT due.queue, due.priority, max(due.vt) FROM due GROUP BY due.queue, due.priority
        ORDER BY due.queue, due.priority
        ON CONFLICT (queue, priority) DO UPDATE SET vt = greatest(c.vt, excluded.vt)
    )
    UPDATE tasks t SET state = 'RUNNING', lease_owner = worker,
        lease_token = nextval('lease_tokens'),
        lease_expires = now() + lease_us * interval '1 microsecond', attempt = t.attempt + 1,
        first_started_at = coalesce(t.first_started_at, now()), started_at = now(), next_at = NULL, vt = NULL
    FROM due
    WHERE t.id = due.id
    RETURNING due.ord, t.id, t.run_id, t.name, t.kind, t.args, t.queue, t.group_name, t.priority, t.state,
        t.policy, t.poison_after, t.timeout_ns, t.grace_ns, t.attempt, due.next_at, t.prev_delay_ns,
        t.lease_owner, t.lease_token, t.lease_expires, t.last_error, t.fingerprint, t.streak,
        t.idempotency_key, t.created_at, t.first_started_at, t.finished_at, t.tenant, t.deferrals,
        t.trace, t.attempt_trace, t.snoozes, t.waits, t.origin;
END
$$;
