-- The claim functions return each claimed row with its place in claim
-- order (ord), straight from the UPDATE, and the store puts the rows in
-- place as it reads them (functions/claim_tasks.sql says why). A claimed
-- row is a type of its own, not taken from tasks, so that a column added
-- to tasks does not break the claim; the functions' RETURNING lists
-- follow its attributes in order.
CREATE TYPE claimed_task AS (ord bigint, id bigint, run_id bigint, name text, kind text, args bytea,
    queue text, group_name text, priority integer, state text, policy text, poison_after integer,
    timeout_ns bigint, grace_ns bigint, attempt integer, next_at timestamptz, prev_delay_ns bigint,
    lease_owner text, lease_token bigint, lease_expires timestamptz, last_error text, fingerprint text,
    streak integer, idempotency_key text, created_at timestamptz, first_started_at timestamptz,
    finished_at timestamptz, tenant text);
