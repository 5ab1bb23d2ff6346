-- Spread (the outage detector) counts the distinct tasks whose attempts
-- failed with one fingerprint lately, and looks for a success of a kind
-- lately, when a task is about to be dead-lettered as poison; the second
-- index also serves SuccessDurations. Failed attempts alone enter the
-- first; SUCCESS tasks alone the second.
CREATE INDEX attempts_failures ON attempts (fingerprint, ended_at) WHERE outcome = 'ERROR';
CREATE INDEX tasks_success ON tasks (kind, name, finished_at) WHERE state = 'SUCCESS';
