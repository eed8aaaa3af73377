-- securepush.events_head: routine file (docs/sql.md).
--
-- The cursor of the newest outcome event that events_after can return now ('0:0' when there is none): a
-- consumer that wants only what happens from now on starts from it.
CREATE OR REPLACE FUNCTION securepush.events_head()
 RETURNS text
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
    SELECT coalesce((
        SELECT e.xid::text || ':' || e.position FROM securepush.delivery_feed e
        WHERE e.xid < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY e.xid DESC, e.position DESC LIMIT 1), '0:0')
$function$;
REVOKE ALL ON FUNCTION securepush.events_head() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.events_head() TO securepush_producer;
