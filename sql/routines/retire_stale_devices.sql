-- securepush.retire_stale_devices: routine file (docs/sql.md).
--
-- Retires active devices not seen for `stale_after` (at most `batch` per call); returns how many.
CREATE OR REPLACE FUNCTION securepush.retire_stale_devices(stale_after interval, batch integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    stale record;
    retired integer := 0;
BEGIN
    FOR stale IN
        SELECT d.id, d.user_id FROM securepush.devices d
        WHERE d.active AND coalesce(d.last_seen_at, d.updated_at) < now() - stale_after
        ORDER BY coalesce(d.last_seen_at, d.updated_at)
        LIMIT batch
        FOR UPDATE SKIP LOCKED
    LOOP
        PERFORM securepush.deactivate_device(stale.id, 'retired: not seen for ' || stale_after::text);
        PERFORM securepush.audit('device_retired', stale.user_id, stale.id, 'not seen for ' || stale_after::text);
        retired := retired + 1;
    END LOOP;
    RETURN retired;
END
$function$;
REVOKE ALL ON FUNCTION securepush.retire_stale_devices(stale_after interval, batch integer) FROM PUBLIC;
