-- securepush.delete_retired_devices: routine file (docs/sql.md).
--
-- Deletes devices that have been inactive (retired, revoked, unregistered, token invalid) for longer
-- than `retention` (`SECUREPUSH_DEVICE_RETENTION`), at most `batch` per call, each audited as
-- `device_deleted`; their remaining deliveries go with them (ON DELETE CASCADE). Returns how many were deleted.
CREATE OR REPLACE FUNCTION securepush.delete_retired_devices(retention interval, batch integer DEFAULT 1000)
 RETURNS integer
 LANGUAGE sql
 SET jit TO 'off'
AS $function$
    WITH gone AS (
        DELETE FROM securepush.devices
        WHERE id = ANY (ARRAY(
            SELECT d.id FROM securepush.devices d
            WHERE NOT d.active AND d.updated_at < now() - retention
            LIMIT batch
        ))
        RETURNING id, user_id
    ),
    audited AS (
        INSERT INTO securepush.audit_log (event, user_id, device_id, reason)
        SELECT 'device_deleted', g.user_id, g.id, 'inactive past the device retention' FROM gone g
    )
    SELECT count(*)::integer FROM gone
$function$;
REVOKE ALL ON FUNCTION securepush.delete_retired_devices(retention interval, batch integer) FROM PUBLIC;
