-- securepush.erase_preview: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.erase_preview()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    NEW.preview := NULL;
    RETURN NEW;
END
$function$;
REVOKE ALL ON FUNCTION securepush.erase_preview() FROM PUBLIC;
