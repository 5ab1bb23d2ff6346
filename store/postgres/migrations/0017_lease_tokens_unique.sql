-- A lease token is unique in the store, not a number per task: every
-- change of a task's owner (a claim, a rescue) takes the next value of one
-- sequence. Until now a claim took the larger of the task's last token
-- plus one and the time in microseconds: the tasks of one claim shared a
-- token, as did tasks claimed in the same microsecond, so a result
-- under one task's token could be recorded for another.
--
-- A claim commits without waiting for the disk (synchronous_commit off),
-- and so may the sequence's advance: after a crash, the sequence can be
-- back before tokens that lost claims handed out. The time floor kept a
-- token after a restart larger than any lost one; the sequence keeps
-- that by starting each run of the server past its start time: the first
-- claim or rescue after a start moves the sequence to the time in
-- microseconds (functions/lease_tokens_past_start.sql), and the sequence
-- stays behind the clock for as long as fewer than a million tokens a
-- second are taken, so every token before a crash is smaller than the
-- next start's time.
CREATE SEQUENCE lease_tokens AS bigint;
SELECT setval('lease_tokens', greatest(
    (SELECT coalesce(max(lease_token), 0) FROM tasks),
    (SELECT coalesce(max(lease_token), 0) FROM attempts),
    (extract(epoch FROM clock_timestamp()) * 1000000)::bigint));
