-- securepush.delivery_queued_late: routine file (docs/sql.md), with its trigger.
--
-- The 'queued' event of a delivery the fan-out wrote claimed (securepush.delivery_queued_events wrote none),
-- written when that claim ends without an outcome: a retry, a release, a rescued lease put the delivery back
-- to wait, and the feed says it is queued from then on. The trigger's WHEN keeps every other update of a
-- delivery (each claim of a waiting one) from calling it.
CREATE OR REPLACE FUNCTION securepush.delivery_queued_late()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    INSERT INTO securepush.delivery_events (notification_id, device_id, platform, event, detail)
    VALUES (NEW.notification_id, NEW.device_id, NEW.platform, 'queued', CASE WHEN NEW.state = 'scheduled'
        THEN 'scheduled' END);
    NEW.queued_logged := true;
    RETURN NEW;
END
$function$;
REVOKE ALL ON FUNCTION securepush.delivery_queued_late() FROM PUBLIC;
CREATE OR REPLACE TRIGGER deliveries_queued_late BEFORE UPDATE OF state ON securepush.deliveries
    FOR EACH ROW WHEN (NOT OLD.queued_logged AND NEW.state <> 'claimed' AND NEW.kind = 'notify')
    EXECUTE FUNCTION securepush.delivery_queued_late();
