-- securepush.erase_preview: routine file (docs/sql.md).
--
-- When a notification's payload is purged, its preview and its producer's traceparent go with it.
CREATE OR REPLACE FUNCTION securepush.erase_preview()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    NEW.preview := NULL;
    NEW.traceparent := NULL;
    RETURN NEW;
END
$function$;
REVOKE ALL ON FUNCTION securepush.erase_preview() FROM PUBLIC;
