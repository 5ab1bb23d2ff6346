-- A task counts its snoozes (attempts ended SENSING, given back), so that
-- a sensor, Go or remote, tells from the task whether it looked before;
-- a claimed row carries the count to the worker.
ALTER TABLE tasks ADD COLUMN snoozes integer NOT NULL DEFAULT 0;
ALTER TYPE claimed_task ADD ATTRIBUTE snoozes integer;

-- The claim functions as in 0021, with the snoozes.
CREATE OR REPLACE FUNCTION claim_tasks (worker text, lease_us bigint, lim bigint, queues text[], kinds text[],
        skip_groups text[], only_group text, skip_queues text[], skip_tenants text[], only_tenant text)
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
    RETURN QUERY
    UPDATE tasks t SET state = 'RUNNING', lease_owner = worker,
        lease_token = nextval('lease_tokens'),
        lease_expires = now() + lease_us * interval '1 microsecond', attempt = t.attempt + 1,
        first_started_at = coalesce(t.first_started_at, now()), started_at = now(), next_at = NULL
    FROM due_tasks(lim, queues, kinds, skip_groups, only_group, skip_queues, skip_tenants, only_tenant)
        WITH ORDINALITY AS due (id, priority, next_at, ord)
    WHERE t.id = due.id
    RETURNING due.ord, t.id, t.run_id, t.name, t.kind, t.args, t.queue, t.group_name, t.priority, t.state,
        t.policy, t.poison_after, t.timeout_ns, t.grace_ns, t.attempt, due.next_at, t.prev_delay_ns,
        t.lease_owner, t.lease_token, t.lease_expires, t.last_error, t.fingerprint, t.streak,
        t.idempotency_key, t.created_at, t.first_started_at, t.finished_at, t.tenant, t.deferrals,
        t.trace, t.attempt_trace, t.snoozes;
END
$$;

CREATE OR REPLACE FUNCTION claim_run_tasks (worker text, lease_us bigint, lim bigint, run bigint, queues text[], kinds text[],
        skip_groups text[], only_group text, skip_queues text[], skip_tenants text[], only_tenant text)
RETURNS SETOF claimed_task
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_custom_plan
SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM lease_tokens_past_start();
    RETURN QUERY
    WITH due AS (
        SELECT d.id, d.priority, d.next_at FROM tasks d
        WHERE d.run_id = run AND d.state IN ('READY', 'RETRYING', 'SENSING') AND d.next_at <= now()
            AND (queues IS NULL OR d.queue = ANY (queues))
            AND (kinds IS NULL OR d.kind = ANY (kinds))
            AND (skip_groups IS NULL OR d.group_name <> ALL (skip_groups))
            AND (only_group IS NULL OR d.group_name = only_group)
            AND (skip_queues IS NULL OR d.queue <> ALL (skip_queues))
            AND (skip_tenants IS NULL OR d.tenant <> ALL (skip_tenants))
            AND (only_tenant IS NULL OR d.tenant = only_tenant)
        ORDER BY d.priority DESC, d.next_at, d.id
        LIMIT lim
        FOR UPDATE OF d SKIP LOCKED
    ), claimed AS (
        UPDATE tasks t SET state = 'RUNNING', lease_owner = worker,
            lease_token = nextval('lease_tokens'),
            lease_expires = now() + lease_us * interval '1 microsecond', attempt = t.attempt + 1,
            first_started_at = coalesce(t.first_started_at, now()), started_at = now(), next_at = NULL
        FROM due
        WHERE t.id = due.id
        RETURNING t.*, due.priority AS due_priority, due.next_at AS due_at
    )
    SELECT row_number() OVER (ORDER BY c.due_priority DESC, c.due_at, c.id), c.id, c.run_id, c.name, c.kind,
        c.args, c.queue, c.group_name, c.priority, c.state, c.policy, c.poison_after, c.timeout_ns, c.grace_ns,
        c.attempt, c.due_at, c.prev_delay_ns, c.lease_owner, c.lease_token, c.lease_expires, c.last_error,
        c.fingerprint, c.streak, c.idempotency_key, c.created_at, c.first_started_at, c.finished_at, c.tenant,
        c.deferrals, c.trace, c.attempt_trace, c.snoozes
    FROM claimed c;
END
$$;
