-- A task keeps the trace context of its enqueue (a W3C traceparent; ''
-- when it was not traced), for the spans of its attempts to link to,
-- and that of its last attempt, for the next attempt to link to.
ALTER TABLE tasks ADD COLUMN trace TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN attempt_trace TEXT NOT NULL DEFAULT '';
