-- securepush.default_ttl: routine file (docs/sql.md).
--
-- The TTL applied when a producer gives none.
CREATE OR REPLACE FUNCTION securepush.default_ttl()
 RETURNS interval
 LANGUAGE sql
 STABLE
 PARALLEL SAFE
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
    SELECT coalesce((SELECT value::interval FROM securepush.settings WHERE key = 'default_ttl'), interval '7 days')
$function$;
REVOKE ALL ON FUNCTION securepush.default_ttl() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.default_ttl() TO securepush_producer;
