-- A task counts its snoozes (attempts ended SENSING, given back), so that
-- a sensor, Go or remote, tells from the task whether it looked before.
ALTER TABLE tasks ADD COLUMN snoozes INTEGER NOT NULL DEFAULT 0;
