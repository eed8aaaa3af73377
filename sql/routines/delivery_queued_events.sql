-- securepush.delivery_queued_events: routine file (docs/sql.md), with its trigger.
--
-- 'queued' for each device a notification will be pushed to (detail 'scheduled' while it waits for its
-- deliver_at or the user's quiet hours). Clear pushes are the server's own and write no event. A delivery the
-- fan-out writes claimed (pushed at once) writes none: its outcome row carries it (delivery_log
-- .queued_with_outcome, since 036), or securepush.delivery_queued_late writes it when the claim ends otherwise.
CREATE OR REPLACE FUNCTION securepush.delivery_queued_events()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    INSERT INTO securepush.delivery_events (notification_id, device_id, platform, event, detail)
    SELECT r.notification_id, r.device_id, r.platform, 'queued', CASE WHEN r.state = 'scheduled' THEN 'scheduled' END
    FROM new_rows r WHERE r.kind = 'notify' AND r.queued_logged;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.delivery_queued_events() FROM PUBLIC;
CREATE OR REPLACE TRIGGER deliveries_queued_events AFTER INSERT ON securepush.deliveries
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION securepush.delivery_queued_events();
