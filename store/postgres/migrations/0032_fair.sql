-- Fair claims across tenants (docs/engine.md, "Fair claims"). A waiting
-- task due to be claimed carries a virtual time, vt: its tenant's place in
-- its lane (queue, priority, tenant), stamped when it is enqueued due, or
-- by the claim that first finds it due (a retry, a snooze, a scheduled
-- task, a dependent made ready): stamp_due, fair_lane (functions/). NULL
-- is not stamped yet. The claim walks tasks_fair: by priority, then vt,
-- so tenants take turns.
ALTER TABLE tasks ADD COLUMN vt double precision;
-- The lane's clock: the largest vt claimed in a queue at a priority. A
-- tenant with nothing waiting starts after it.
CREATE TABLE fair_clocks (
    queue    text             NOT NULL,
    priority integer          NOT NULL,
    vt       double precision NOT NULL,
    PRIMARY KEY (queue, priority)
);
-- A tenant's weight: its share of the claims against a tenant of weight
-- 1 (store.DefaultWeight, which a tenant without a row has).
CREATE TABLE tenant_weights (
    tenant text    NOT NULL PRIMARY KEY,
    weight integer NOT NULL CHECK (weight > 0)
);
-- The waiting tasks already due get their stamps, in due order within
-- their lane; those due later are stamped by the claim that finds them due.
UPDATE tasks SET vt = s.n
FROM (SELECT id, row_number() OVER (PARTITION BY queue, priority, tenant ORDER BY next_at, id) AS n
    FROM tasks WHERE state IN ('READY', 'RETRYING', 'SENSING') AND next_at <= now()) AS s
WHERE tasks.id = s.id;
DROP INDEX tasks_claim;
-- The claim walks this index in claim order and stops at its limit.
CREATE INDEX tasks_fair ON tasks (priority DESC, vt, id)
    WHERE state IN ('READY', 'RETRYING', 'SENSING') AND vt IS NOT NULL;
-- The claim's stamping: the tasks due and not stamped, by due time.
CREATE INDEX tasks_unstamped ON tasks (next_at)
    WHERE state IN ('READY', 'RETRYING', 'SENSING') AND vt IS NULL;
-- A lane's last stamp: its largest vt waiting.
CREATE INDEX tasks_lane ON tasks (queue, priority, tenant, vt)
    WHERE state IN ('READY', 'RETRYING', 'SENSING') AND vt IS NOT NULL;
