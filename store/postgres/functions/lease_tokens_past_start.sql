-- lease_tokens_past_start moves the lease_tokens sequence past the
-- server's start time, in microseconds, when it is not yet. A claim
-- commits without waiting for the disk, and so may the sequence's
-- advance: after a crash, the sequence can be back before tokens that
-- lost claims handed out. Moved past each start of the server, and
-- staying behind the clock for as long as fewer than a million tokens a
-- second are taken, it keeps every token before a crash smaller than the
-- next start's time. Every taker of tokens calls it before taking one: a
-- taker that finds the sequence behind waits for the lock, so none takes
-- a value while the sequence moves; the move happens once per start,
-- under a lock only the movers take, and every other call reads the
-- sequence once and goes on. It reads the sequence with a function, not a
-- query: a scan of it, planned under the claim's enable_seqscan off,
-- would cost enough to be compiled (JIT) every time.
CREATE FUNCTION lease_tokens_past_start() RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
    started bigint := (extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint;
BEGIN
    IF coalesce(pg_sequence_last_value('lease_tokens'), 0) < started THEN
        PERFORM pg_advisory_xact_lock('lease_tokens'::regclass::oid::bigint);
        IF coalesce(pg_sequence_last_value('lease_tokens'), 0) < started THEN
            PERFORM setval('lease_tokens', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
        END IF;
    END IF;
END
$$;
