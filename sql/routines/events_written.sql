-- securepush.events_written: routine file (docs/sql.md).
--
-- Called once per statement that wrote outcome events: one NOTIFY on securepush_events carrying only the
-- cursor of the statement's last event (never an id or a word). Listeners then read with events_after.
CREATE OR REPLACE FUNCTION securepush.events_written(last_position bigint)
 RETURNS void
 LANGUAGE sql
 SET jit TO 'off'
AS $function$
    SELECT pg_notify('securepush_events', pg_current_xact_id()::text || ':' || last_position)
    WHERE last_position IS NOT NULL
$function$;
REVOKE ALL ON FUNCTION securepush.events_written(last_position bigint) FROM PUBLIC;
