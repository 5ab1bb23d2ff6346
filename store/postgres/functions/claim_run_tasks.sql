-- claim_run_tasks is claim_tasks for the tasks of one run, as `grit run`
-- claims: a process working its own task file must not take the tasks of
-- other runs sharing the store. It finds the run's due tasks through
-- tasks_run_due, by due time up to now (the run's tasks not yet due are
-- never read), and sorts them, instead of walking the claim index past
-- every other due task, and it is planned at each call (a run's tasks are few,
-- and the plan follows the run), unlike claim_tasks, which every worker
-- calls for every task. The claim is otherwise claim_tasks's: the same
-- lease tokens, the same move to RUNNING, commit without waiting for the
-- disk, the same rows, numbered in claim order with a window over the
-- claimed rows, and the same pauses left out (paused); but in due order,
-- not in fair turns (a run is one tenant's), and it needs no stamps.
CREATE FUNCTION claim_run_tasks (worker text, lease_us bigint, lim bigint, run bigint, queues text[], kinds text[],
        skip_groups text[], only_group text, skip_queues text[], skip_tenants text[], only_tenant text)
RETURNS SETOF claimed_task
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_custom_plan
SET search_path FROM CURRENT
AS $$
DECLARE
    skip_kinds text[] := paused('kind');
BEGIN
    skip_queues := skip_queues || paused('queue');
    skip_tenants := skip_tenants || paused('tenant');
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM lease_tokens_past_start();
    RETURN QUERY
    WITH due AS (
        SELECT d.id, d.priority, d.next_at FROM tasks d
        WHERE d.run_id = run AND d.state IN ('READY', 'RETRYING', 'SENSING') AND d.next_at <= now()
            AND (queues IS NULL OR d.queue = ANY (queues))
            AND (kinds IS NULL OR d.kind = ANY (kinds))
            AND (skip_kinds IS NULL OR d.kind <> ALL (skip_kinds))
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
            first_started_at = coalesce(t.first_started_at, now()), started_at = now(), next_at = NULL, vt = NULL
        FROM due
        WHERE t.id = due.id
        RETURNING t.*, due.priority AS due_priority, due.next_at AS due_at
    )
    SELECT row_number() OVER (ORDER BY c.due_priority DESC, c.due_at, c.id), c.id, c.run_id, c.name, c.kind,
        c.args, c.queue, c.group_name, c.priority, c.state, c.policy, c.poison_after, c.timeout_ns, c.grace_ns,
        c.attempt, c.due_at, c.prev_delay_ns, c.lease_owner, c.lease_token, c.lease_expires, c.last_error,
        c.fingerprint, c.streak, c.idempotency_key, c.created_at, c.first_started_at, c.finished_at, c.tenant,
        c.deferrals, c.trace, c.attempt_trace, c.snoozes, c.waits, c.origin
    FROM claimed c;
END
$$;
