-- A task counts its snoozes (attempts ended SENSING, given back), so that
-- a sensor, Go or remote, tells from the task whether it looked before;
-- a claimed row carries the count to the worker.
ALTER TABLE tasks ADD COLUMN snoozes integer NOT NULL DEFAULT 0;
ALTER TYPE claimed_task ADD ATTRIBUTE snoozes integer;
