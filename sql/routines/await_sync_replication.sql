-- securepush.await_sync_replication: routine file (docs/sql.md).
--
-- Waits (server side, at most `timeout_ms`) until a synchronous standby has flushed past the current WAL
-- position. Returns true when one has, or when no synchronous standby is configured
-- (`synchronous_standby_names` empty: the gate has nothing to wait for); false at the timeout (none
-- connected, or lagging): the caller releases the batch and claims it again later.
CREATE OR REPLACE FUNCTION securepush.await_sync_replication(timeout_ms integer)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
    target pg_lsn := pg_current_wal_lsn();
    deadline timestamptz := clock_timestamp() + timeout_ms * interval '1 millisecond';
    flushed boolean;
BEGIN
    IF current_setting('synchronous_standby_names') = '' THEN
        RETURN true;
    END IF;
    LOOP
        SELECT coalesce(bool_or(r.flush_lsn >= target), false) INTO flushed
        FROM pg_stat_replication r WHERE r.sync_state IN ('sync', 'quorum');
        IF flushed THEN
            RETURN true;
        END IF;
        IF clock_timestamp() >= deadline THEN
            RETURN false;
        END IF;
        PERFORM pg_sleep(0.002);
    END LOOP;
END
$function$;
REVOKE ALL ON FUNCTION securepush.await_sync_replication(timeout_ms integer) FROM PUBLIC;
