-- securepush.default_ttl: routine file (docs/sql.md).
--
-- The TTL applied when a producer gives none (the default of notifications.expires_at: evaluated in every
-- producer's INSERT). PL/pgSQL since 044: its statement is planned once per session, where an SQL function
-- called from a column default was planned again at every INSERT (a fifth of a single-row INSERT's time).
CREATE OR REPLACE FUNCTION securepush.default_ttl()
 RETURNS interval
 LANGUAGE plpgsql
 STABLE
 PARALLEL SAFE
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    RETURN coalesce((SELECT value::interval FROM securepush.settings WHERE key = 'default_ttl'), interval '7 days');
END
$function$;
REVOKE ALL ON FUNCTION securepush.default_ttl() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.default_ttl() TO securepush_producer;
