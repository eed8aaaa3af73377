-- securepush.fan_out: routine file (docs/sql.md).
--
-- The INSERT's trigger: what the producer's transaction must decide (a critical urgency refused unless enabled)
-- and a row per notification in securepush.fan_out_queue; the dispatchers do the rest (fan_out_queued) after
-- the commit, woken here. A broadcast's INSERT … SELECT writes its queue rows in one statement.
CREATE OR REPLACE FUNCTION securepush.fan_out()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    IF EXISTS (SELECT 1 FROM new_notifications n WHERE n.urgency = 'critical')
       AND coalesce((SELECT value FROM securepush.settings WHERE key = 'critical_urgency'), 'off') <> 'on' THEN
        RAISE EXCEPTION 'urgency critical is not enabled in this deployment (SECUREPUSH_CRITICAL_URGENCY=on)'
            USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.fan_out_queue (notification_id) SELECT n.id FROM new_notifications n;
    PERFORM securepush.wake_dispatchers();
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.fan_out() FROM PUBLIC;
