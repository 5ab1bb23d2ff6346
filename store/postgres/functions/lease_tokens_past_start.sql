-- lease_tokens_past_start moves the lease_tokens sequence up to the clock,
-- in microseconds, when it is behind the moment this server last began to
-- take writes: its start, or its promotion from standby. A claim commits
-- without waiting for the disk or a standby, and so may the sequence's
-- advance: after a crash, or on a standby promoted after its primary
-- died, the sequence can be back before tokens that lost claims handed
-- out, and would hand them out again (TestLeaseTokensOutrankAFailover).
-- Moved to the clock once the server takes writes, and staying behind
-- the clock for as long as fewer than a million tokens a second are
-- taken, it keeps every token handed out before a crash or a failover
-- smaller than every token after it (a failover to another host assumes
-- the two hosts' clocks agree within the time it took).
--
-- The start is pg_postmaster_start_time(). A promotion has no such
-- function; it writes the control file (pg_control_system()'s
-- pg_control_last_modified), which otherwise changes at checkpoints, in
-- whole seconds. So the sequence is also moved while it is behind the
-- end of the second of the control file's last change: during the
-- second after a promotion (or a checkpoint), each taker moves it to the
-- clock again, and every token is then past the promotion. Every taker
-- of tokens calls it before taking one: a taker that finds the sequence
-- behind waits for the lock, so none takes a value while the sequence
-- moves; every other call reads the sequence and goes on. The moment is
-- read once per connection (a read of the
-- control file costs a tenth of a small claim) and kept in the
-- connection's setting grit.lease_tokens_began: a connection to a server
-- is made after that server's start, and, as writes go only to a
-- primary, after its promotion; the value is the server's, whichever
-- client a pooler gives the connection to. It reads the sequence with a
-- function, not a query: a scan of it, planned under the claim's
-- enable_seqscan off, would cost enough to be compiled (JIT) every time.
CREATE FUNCTION lease_tokens_past_start() RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
    began bigint := nullif(current_setting('grit.lease_tokens_began', true), '')::bigint;
BEGIN
    IF began IS NULL THEN
        began := (extract(epoch FROM greatest(pg_postmaster_start_time(),
            (pg_control_system()).pg_control_last_modified + interval '1 second')) * 1000000)::bigint;
        PERFORM set_config('grit.lease_tokens_began', began::text, false);
    END IF;
    IF coalesce(pg_sequence_last_value('lease_tokens'), 0) < began THEN
        PERFORM pg_advisory_xact_lock('lease_tokens'::regclass::oid::bigint);
        IF coalesce(pg_sequence_last_value('lease_tokens'), 0) < began THEN
            PERFORM setval('lease_tokens', greatest(coalesce(pg_sequence_last_value('lease_tokens'), 0),
                (extract(epoch FROM clock_timestamp()) * 1000000)::bigint));
        END IF;
    END IF;
END
$$;
