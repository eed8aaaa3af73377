-- securepush.refresh_time_zones: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.refresh_time_zones()
 RETURNS integer
 LANGUAGE sql
 SET jit TO 'off'
AS $function$
    WITH added AS (
        INSERT INTO securepush.time_zones (name) SELECT z.name FROM pg_catalog.pg_timezone_names z
        ON CONFLICT (name) DO NOTHING
        RETURNING 1
    )
    SELECT count(*)::integer FROM added
$function$;
REVOKE ALL ON FUNCTION securepush.refresh_time_zones() FROM PUBLIC;
