-- securepush_relay.unbind: routine file (docs/sql.md).
--
-- Releases digests bound to an installation; other installations' bindings of the same tokens stay. Returns
-- how many were released.
CREATE OR REPLACE FUNCTION securepush_relay.unbind(p_installation uuid, p_digests bytea[])
 RETURNS integer
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush_relay'
AS $function$
    WITH gone AS (
        DELETE FROM securepush_relay.bindings WHERE installation_id = p_installation AND digest = ANY (p_digests)
            RETURNING 1
    )
    SELECT count(*)::integer FROM gone
$function$;
REVOKE ALL ON FUNCTION securepush_relay.unbind(p_installation uuid, p_digests bytea[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush_relay.unbind(p_installation uuid, p_digests bytea[]) TO securepush_relay_service;
