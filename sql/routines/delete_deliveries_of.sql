-- securepush.delete_deliveries_of: routine file (docs/sql.md), with its triggers.
--
-- A deleted notification or device takes its deliveries with it (what the foreign keys' ON DELETE CASCADE did
-- until 036; the keys also locked the notification and the device row of every delivery written, a WAL record
-- each). Nothing is logged. No fan-out races these deletes: retention deletes only notifications expired
-- longer than SECUREPUSH_RETENTION (a fan-out writes deliveries of unexpired ones) and devices retired for
-- longer than their retention (a fan-out writes deliveries to active ones); a delivery left without its device
-- would not be claimed (the claim joins the device) and the expiry would log it.
CREATE OR REPLACE FUNCTION securepush.delete_deliveries_of()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    IF TG_TABLE_NAME = 'notifications' THEN
        DELETE FROM securepush.deliveries d WHERE d.notification_id = ANY(ARRAY(SELECT o.id FROM old_rows o));
    ELSE
        DELETE FROM securepush.deliveries d WHERE d.device_id = ANY(ARRAY(SELECT o.id FROM old_rows o));
    END IF;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.delete_deliveries_of() FROM PUBLIC;
CREATE OR REPLACE TRIGGER notifications_delete_deliveries AFTER DELETE ON securepush.notifications
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION securepush.delete_deliveries_of();
CREATE OR REPLACE TRIGGER devices_delete_deliveries AFTER DELETE ON securepush.devices
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION securepush.delete_deliveries_of();
