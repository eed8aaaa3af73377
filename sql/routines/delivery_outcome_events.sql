-- securepush.delivery_outcome_events: routine file (docs/sql.md), with its trigger.
--
-- A delivery's last word, from the history row written when it ends: 'pushed' (accepted by the platform;
-- detail: its message id, when it gave one), 'undelivered' (detail 'token_invalid' or 'failed' after the
-- last attempt), 'expired', 'cancelled', 'superseded' (detail: the server's reason).
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
CREATE OR REPLACE TRIGGER delivery_log_outcome_events AFTER INSERT ON securepush.delivery_log
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION securepush.delivery_outcome_events();
