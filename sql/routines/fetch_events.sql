-- securepush.fetch_events: routine file (docs/sql.md), with its trigger.
--
-- 'fetched' the first time each device fetches a notification (the row securepush.fetches gains).
CREATE OR REPLACE FUNCTION securepush.fetch_events()
 RETURNS trigger
 LANGUAGE plpgsql SECURITY DEFINER SET enable_seqscan TO 'off' SET jit TO 'off' SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    INSERT INTO securepush.delivery_events (notification_id, device_id, platform, event)
    SELECT r.notification_id, r.device_id, d.platform, 'fetched'
    FROM new_rows r LEFT JOIN securepush.devices d ON d.id = r.device_id;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.fetch_events() FROM PUBLIC;
CREATE OR REPLACE TRIGGER fetches_events AFTER INSERT ON securepush.fetches
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION securepush.fetch_events();
