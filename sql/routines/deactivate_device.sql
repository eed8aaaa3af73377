-- securepush.deactivate_device: routine file (docs/sql.md).
--
-- Deactivates a device (its credential stops working) and cancels its pending deliveries.
CREATE OR REPLACE FUNCTION securepush.deactivate_device(device_id uuid, reason text DEFAULT 'unregistered'::text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
#variable_conflict use_variable
DECLARE
    changed boolean;
BEGIN
    UPDATE securepush.devices d SET active = false, deactivated_reason = reason, updated_at = now()
    WHERE d.id = device_id AND d.active;
    changed := FOUND;
    PERFORM securepush.cancel_pending_deliveries(device_id, 'device deactivated: ' || reason);
    RETURN changed;
END
$function$;
REVOKE ALL ON FUNCTION securepush.deactivate_device(device_id uuid, reason text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.deactivate_device(device_id uuid, reason text) TO securepush_accounts;
