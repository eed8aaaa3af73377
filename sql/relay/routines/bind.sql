-- securepush_relay.bind: routine file (docs/sql.md).
--
-- Binds tokens to an installation. A binding is (installation, token digest): a phone signed in to several
-- self-hosted servers has its token bound by each, and each pushes to it (issue 48, item 1; before, binding
-- took the token from the installation that had it). A digest another installation has bound too is audited
-- (`token_shared`). Returns how many were newly bound, or -1 when the installation's max_tokens would be
-- exceeded (nothing is bound then): the cap counts the installation's own bindings only.
CREATE OR REPLACE FUNCTION securepush_relay.bind(p_installation uuid, p_digests bytea[])
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush_relay'
AS $function$
DECLARE
    cap integer;
    current_count bigint;
    changed integer;
BEGIN
    -- Serializes one installation's binds (its cap); other installations are not held.
    SELECT max_tokens INTO cap FROM securepush_relay.installations WHERE id = p_installation FOR UPDATE;
    IF cap IS NOT NULL THEN
        SELECT count(*) INTO current_count FROM (
            SELECT digest FROM securepush_relay.bindings WHERE installation_id = p_installation
            UNION SELECT unnest(p_digests)
        ) t;
        IF current_count > cap THEN
            RETURN -1;
        END IF;
    END IF;
    WITH added AS (
        INSERT INTO securepush_relay.bindings (digest, installation_id)
        SELECT DISTINCT d, p_installation FROM unnest(p_digests) d
        ON CONFLICT (installation_id, digest) DO NOTHING
        RETURNING digest
    ),
    shared AS (
        INSERT INTO securepush_relay.audit (event, installation_id, previous_installation_id)
        SELECT 'token_shared', p_installation, min(b.installation_id::text)::uuid
        FROM added a JOIN securepush_relay.bindings b ON b.digest = a.digest AND b.installation_id <> p_installation
        GROUP BY a.digest
    )
    SELECT count(*)::integer INTO changed FROM added;
    RETURN changed;
END
$function$;
REVOKE ALL ON FUNCTION securepush_relay.bind(p_installation uuid, p_digests bytea[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush_relay.bind(p_installation uuid, p_digests bytea[]) TO securepush_relay_service;
