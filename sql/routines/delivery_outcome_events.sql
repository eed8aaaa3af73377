-- securepush.delivery_outcome_events: routine file (docs/sql.md).
--
-- Unused since 032, which dropped its trigger: the feed reads each outcome from its history row
-- (securepush.delivery_feed). Before, it restated every history row as an event in delivery_events. It is
-- dropped by the next release's contract step (an expand-only migration drops no function).
CREATE OR REPLACE FUNCTION securepush.delivery_outcome_events()
 RETURNS trigger
 LANGUAGE plpgsql SECURITY DEFINER SET jit TO 'off' SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    INSERT INTO securepush.delivery_events (notification_id, device_id, platform, event, detail)
    SELECT r.notification_id, r.device_id, r.platform,
           CASE r.outcome WHEN 'sent' THEN 'pushed' WHEN 'failed' THEN 'undelivered' WHEN 'token_invalid' THEN 'undelivered'
                          ELSE r.outcome END,
           CASE r.outcome WHEN 'sent' THEN r.provider_message_id WHEN 'failed' THEN 'failed'
                          WHEN 'token_invalid' THEN 'token_invalid' ELSE r.last_error END
    FROM new_rows r WHERE r.kind = 'notify';
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.delivery_outcome_events() FROM PUBLIC;
