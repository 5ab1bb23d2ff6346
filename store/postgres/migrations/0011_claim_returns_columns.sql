-- claim_tasks returned each claimed task as one composite value and took
-- its columns apart again, each column by a walk from the row's start: a
-- sixth of the claim's time for a batch of 500. It now returns the columns
-- as the UPDATE gives them. They are named, in the table's order, because
-- RETURN QUERY must match SETOF tasks exactly: a migration that adds a
-- column to tasks must replace this function too (every claim fails until
-- it does, which the tests show at once).
CREATE OR REPLACE FUNCTION claim_tasks (worker text, lease_us bigint, lim bigint, queues text[], kinds text[],
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
        RETURNING t.*, due.priority AS due_priority, due.next_at AS due_at
    )
    SELECT c.id, c.run_id, c.name, c.kind, c.args, c.queue, c.group_name, c.priority, c.state, c.policy,
        c.poison_after, c.timeout_ns, c.grace_ns, c.attempt, c.next_at, c.prev_delay_ns, c.lease_owner,
        c.lease_token, c.lease_expires, c.last_error, c.fingerprint, c.streak, c.idempotency_key,
        c.needs_left, c.created_at, c.first_started_at, c.finished_at, c.started_at, c.tenant
    FROM claimed c
    ORDER BY c.due_priority DESC, c.due_at, c.id;
END
$$;
