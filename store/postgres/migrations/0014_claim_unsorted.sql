-- The claim sorted its claimed rows twice, each time copying the whole
-- rows: claim_tasks into claim order, then the caller's query into the
-- function's order (WITH ORDINALITY ... ORDER BY). Together with the CTE
-- the UPDATE's rows went through, that was a tenth of the claim's time in
-- the database. The claim functions now return each row with its place in
-- claim order (ord, from 1), straight from the UPDATE, and the store puts
-- the rows in place as it reads them.
--
-- claim_tasks numbers due_tasks's rows, which come in claim order, WITH
-- ORDINALITY. A place can be missing from the rows: due_tasks can lock a
-- task committed after the UPDATE took its snapshot, which the UPDATE does
-- not see; the task stays due for the next claim. A claimed row is a type
-- of its own, not taken from tasks: a column added to tasks later no
-- longer breaks the claim (0011).
CREATE TYPE claimed_task AS (ord bigint, id bigint, run_id bigint, name text, kind text, args bytea,
    queue text, group_name text, priority integer, state text, policy text, poison_after integer,
    timeout_ns bigint, grace_ns bigint, attempt integer, next_at timestamptz, prev_delay_ns bigint,
    lease_owner text, lease_token bigint, lease_expires timestamptz, last_error text, fingerprint text,
    streak integer, idempotency_key text, created_at timestamptz, first_started_at timestamptz,
    finished_at timestamptz, tenant text);

DROP FUNCTION claim_tasks (text, bigint, bigint, text[], text[], text[], text, text[], text[], text);
CREATE FUNCTION claim_tasks (worker text, lease_us bigint, lim bigint, queues text[], kinds text[],
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
    RETURN QUERY
    UPDATE tasks t SET state = 'RUNNING', lease_owner = worker,
        lease_token = greatest(t.lease_token + 1, (extract(epoch FROM now()) * 1000000)::bigint),
        lease_expires = now() + lease_us * interval '1 microsecond', attempt = t.attempt + 1,
        first_started_at = coalesce(t.first_started_at, now()), started_at = now(), next_at = NULL
    FROM due_tasks(lim, queues, kinds, skip_groups, only_group, skip_queues, skip_tenants, only_tenant)
        WITH ORDINALITY AS due (id, priority, next_at, ord)
    WHERE t.id = due.id
    RETURNING due.ord, t.id, t.run_id, t.name, t.kind, t.args, t.queue, t.group_name, t.priority, t.state,
        t.policy, t.poison_after, t.timeout_ns, t.grace_ns, t.attempt, t.next_at, t.prev_delay_ns,
        t.lease_owner, t.lease_token, t.lease_expires, t.last_error, t.fingerprint, t.streak,
        t.idempotency_key, t.created_at, t.first_started_at, t.finished_at, t.tenant;
END
$$;

-- claim_run_tasks returns the same rows; its run's tasks are few, and it
-- numbers them in claim order with a window over the claimed rows.
DROP FUNCTION claim_run_tasks (text, bigint, bigint, bigint, text[], text[], text[], text, text[], text[], text);
CREATE FUNCTION claim_run_tasks (worker text, lease_us bigint, lim bigint, run bigint, queues text[], kinds text[],
        skip_groups text[], only_group text, skip_queues text[], skip_tenants text[], only_tenant text)
RETURNS SETOF claimed_task
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_custom_plan
SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
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
            lease_token = greatest(t.lease_token + 1, (extract(epoch FROM now()) * 1000000)::bigint),
            lease_expires = now() + lease_us * interval '1 microsecond', attempt = t.attempt + 1,
            first_started_at = coalesce(t.first_started_at, now()), started_at = now(), next_at = NULL
        FROM due
        WHERE t.id = due.id
        RETURNING t.*, due.priority AS due_priority, due.next_at AS due_at
    )
    SELECT row_number() OVER (ORDER BY c.due_priority DESC, c.due_at, c.id), c.id, c.run_id, c.name, c.kind,
        c.args, c.queue, c.group_name, c.priority, c.state, c.policy, c.poison_after, c.timeout_ns, c.grace_ns,
        c.attempt, c.next_at, c.prev_delay_ns, c.lease_owner, c.lease_token, c.lease_expires, c.last_error,
        c.fingerprint, c.streak, c.idempotency_key, c.created_at, c.first_started_at, c.finished_at, c.tenant
    FROM claimed c;
END
$$;
