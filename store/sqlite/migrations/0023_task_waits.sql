-- A task counts the claims given back before their attempt began (a
-- spent retry budget, a limit, a hold): they are not attempts, and the
-- attempt history has no row for them.
ALTER TABLE tasks ADD COLUMN waits INTEGER NOT NULL DEFAULT 0;
