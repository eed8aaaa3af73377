-- securepush.erase_preview: routine file (docs/sql.md), with its trigger.
--
-- When a notification's payload is purged, its preview and its producer's traceparent go with it. The routines
-- that purge (cancel, purge_payloads) clear all three in their own UPDATE; this trigger is the net under any
-- other UPDATE that clears the payload alone, and erases the other two right after it. An AFTER trigger since
-- 045: a BEFORE ROW UPDATE trigger makes PostgreSQL lock every row any UPDATE of the table changes, whatever
-- its column list and WHEN say (a WAL record on every read's mark).
CREATE OR REPLACE FUNCTION securepush.erase_preview()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    UPDATE securepush.notifications n SET preview = NULL, traceparent = NULL
    WHERE n.id = NEW.id AND n.payload IS NULL;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.erase_preview() FROM PUBLIC;
CREATE OR REPLACE TRIGGER notifications_erase_preview AFTER UPDATE OF payload ON securepush.notifications
    FOR EACH ROW WHEN (NEW.payload IS NULL AND (NEW.preview IS NOT NULL OR NEW.traceparent IS NOT NULL))
    EXECUTE FUNCTION securepush.erase_preview();
