-- A task keeps the trace context of its enqueue (a W3C traceparent; ''
-- when it was not traced), for the spans of its attempts to link to,
-- and that of its last attempt, for the next attempt to link to. A
-- claimed row carries both to the worker, and the time it became due
-- (in next_at, which the claim clears on the row), for the worker to
-- tell how long it waited.
ALTER TABLE tasks ADD COLUMN trace text NOT NULL DEFAULT '',
    ADD COLUMN attempt_trace text NOT NULL DEFAULT '';
ALTER TYPE claimed_task ADD ATTRIBUTE trace text, ADD ATTRIBUTE attempt_trace text;
