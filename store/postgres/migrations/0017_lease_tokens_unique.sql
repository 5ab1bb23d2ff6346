-- A lease token is unique in the store, not a number per task: every
-- change of a task's owner (a claim, a rescue) takes the next value of one
-- sequence. Until now a claim took the larger of the task's last token
-- plus one and the time in microseconds: the tasks of one claim shared a
-- token, as did tasks claimed in the same microsecond, so a result
-- under one task's token could be recorded for another.
--
-- A claim commits without waiting for the disk (synchronous_commit off),
-- and so may the sequence's advance: after a crash, the sequence can be
-- back before tokens that lost claims handed out. The time floor kept a
-- token after a restart larger than any lost one; the sequence keeps
-- that by starting each run of the server past its start time: the first
-- claim or rescue after a start moves the sequence to the time in
-- microseconds (lease_tokens_past_start), and the sequence stays behind
-- the clock for as long as fewer than a million tokens a second are
-- taken, so every token before a crash is smaller than the next start's
-- time. The move happens once per start, under a lock only the movers
-- take; every other claim reads the sequence once and goes on.
CREATE SEQUENCE lease_tokens AS bigint;
SELECT setval('lease_tokens', greatest(
    (SELECT coalesce(max(lease_token), 0) FROM tasks),
    (SELECT coalesce(max(lease_token), 0) FROM attempts),
    (extract(epoch FROM clock_timestamp()) * 1000000)::bigint));

-- lease_tokens_past_start moves lease_tokens past the server's start time
-- when it is not yet. Every taker of tokens calls it before taking one:
-- a taker that finds the sequence behind waits for the lock, so none
-- takes a value while the sequence moves. It reads the sequence with a
-- function, not a query: a scan of it, planned under the claim's
-- enable_seqscan off, would cost enough to be compiled (JIT) every time.
CREATE FUNCTION lease_tokens_past_start() RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
    started bigint := (extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint;
BEGIN
    IF coalesce(pg_sequence_last_value('lease_tokens'), 0) < started THEN
        PERFORM pg_advisory_xact_lock('lease_tokens'::regclass::oid::bigint);
        IF coalesce(pg_sequence_last_value('lease_tokens'), 0) < started THEN
            PERFORM setval('lease_tokens', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
        END IF;
    END IF;
END
$$;

-- new_lease_token is the next token, for statements that take a few
-- (rescues); the claim functions check once and take many.
CREATE FUNCTION new_lease_token() RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM lease_tokens_past_start();
    RETURN nextval('lease_tokens');
END
$$;

-- The claim functions as in 0014, their tokens from the sequence.
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
        t.policy, t.poison_after, t.timeout_ns, t.grace_ns, t.attempt, t.next_at, t.prev_delay_ns,
        t.lease_owner, t.lease_token, t.lease_expires, t.last_error, t.fingerprint, t.streak,
        t.idempotency_key, t.created_at, t.first_started_at, t.finished_at, t.tenant;
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
        c.attempt, c.next_at, c.prev_delay_ns, c.lease_owner, c.lease_token, c.lease_expires, c.last_error,
        c.fingerprint, c.streak, c.idempotency_key, c.created_at, c.first_started_at, c.finished_at, c.tenant
    FROM claimed c;
END
$$;
