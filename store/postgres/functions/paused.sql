-- paused lists the names that scope ('queue', 'kind' or 'tenant') has
-- paused, NULL when none. The claims (due_tasks, claim_run_tasks) leave
-- their tasks out, as the claimer's gate does from the pauses it read
-- last: read in the claim, these are the pauses committed before it, so
-- that once Pause returns no claim, by any worker, takes their tasks.
CREATE FUNCTION paused (sc text) RETURNS text[]
LANGUAGE sql STABLE
SET search_path FROM CURRENT
AS $$ SELECT array_agg(p.name) FROM pauses p WHERE p.scope = sc $$;
