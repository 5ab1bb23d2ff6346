-- A task counts the claims given back before their attempt began (a
-- spent retry budget, a limit, a hold): they are not attempts, and the
-- attempt history has no row for them; a claimed row carries the count.
ALTER TABLE tasks ADD COLUMN waits integer NOT NULL DEFAULT 0;
ALTER TYPE claimed_task ADD ATTRIBUTE waits integer;
