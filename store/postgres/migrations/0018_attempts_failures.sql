-- Spread (the outage detector) counts the distinct tasks whose attempts
-- failed with one fingerprint in the last minute or so, when a task is
-- about to be dead-lettered as poison. This index holds failed attempts
-- alone, so successes never touch it.
CREATE INDEX attempts_failures ON attempts (fingerprint, ended_at) WHERE outcome = 'ERROR';
