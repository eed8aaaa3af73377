-- securepush.fetch_events: routine file (docs/sql.md).
--
-- Unused since 032, which dropped its trigger: the feed reads 'fetched' from the fetches row itself
-- (securepush.delivery_feed). Before, it restated each new fetches row as an event in delivery_events. It is
-- dropped by the next release's contract step (an expand-only migration drops no function).
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
