-- A resource failure defers its task without using an attempt (a full
-- cluster must not fail a task whose policy is "never"). The task counts
-- its deferrals on their own, for the resource backoff and its ceiling;
-- a claimed row carries the count to the worker that decides.
ALTER TABLE tasks ADD COLUMN deferrals integer NOT NULL DEFAULT 0;
ALTER TYPE claimed_task ADD ATTRIBUTE deferrals integer;
