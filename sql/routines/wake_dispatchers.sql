-- securepush.wake_dispatchers: routine file (docs/sql.md).
--
-- NOTIFY the dispatchers' channel when a running dispatcher waits for work.
CREATE OR REPLACE FUNCTION securepush.wake_dispatchers()
 RETURNS void
 LANGUAGE plpgsql
 SET enable_seqscan TO 'on'
 SET jit TO 'off'
AS $function$
BEGIN
    IF EXISTS (SELECT 1 FROM securepush.dispatchers WHERE awaiting_wakeup AND stopped_at IS NULL) THEN
        PERFORM pg_notify('securepush_deliveries', '');
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION securepush.wake_dispatchers() FROM PUBLIC;
