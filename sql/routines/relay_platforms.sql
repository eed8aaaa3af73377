-- securepush.relay_platforms: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.relay_platforms()
 RETURNS text[]
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'securepush'
AS $function$
    SELECT coalesce((SELECT string_to_array(nullif(s.value, ''), ',') FROM securepush.settings s
        WHERE s.key = 'relay_platforms'), '{}')
$function$;
REVOKE ALL ON FUNCTION securepush.relay_platforms() FROM PUBLIC;
