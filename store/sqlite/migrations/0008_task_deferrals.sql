-- A resource failure defers its task without using an attempt; the task
-- counts its deferrals on their own, for the resource backoff and its
-- ceiling.
ALTER TABLE tasks ADD COLUMN deferrals INTEGER NOT NULL DEFAULT 0;
