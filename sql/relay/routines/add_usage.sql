-- securepush_relay.add_usage: routine file (docs/sql.md).
--
-- Adds the pushes a relay process counted in memory for installations without quotas (`admit` writes no usage
-- row for them per request) to this minute's usage: one statement a second per process, whatever the load.
CREATE OR REPLACE FUNCTION securepush_relay.add_usage(p_installations uuid[], p_pushes bigint[])
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush_relay'
 SET jit TO 'off'
AS $function$
    INSERT INTO securepush_relay.usage AS u (installation_id, minute, pushes)
    SELECT t.installation, date_trunc('minute', now()), t.pushes
    FROM unnest(p_installations, p_pushes) AS t(installation, pushes)
    JOIN securepush_relay.installations i ON i.id = t.installation
    ON CONFLICT (installation_id, minute) DO UPDATE SET pushes = u.pushes + excluded.pushes
$function$;
REVOKE ALL ON FUNCTION securepush_relay.add_usage(p_installations uuid[], p_pushes bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush_relay.add_usage(p_installations uuid[],
    p_pushes bigint[]) TO securepush_relay_service;
