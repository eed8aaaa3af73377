-- securepush_relay.bind: routine file (docs/sql.md).
--
-- Binds tokens to an installation; a token bound to another is re-bound to this one (a device moved
-- between servers) and audited. Returns how many were newly bound or re-bound, or -1 when the
-- installation's max_tokens would be exceeded (nothing is bound then).
CREATE OR REPLACE FUNCTION securepush_relay.bind(p_installation uuid, p_digests bytea[])
 RETURNS integer
 LANGUAGE plpgsql SET search_path TO 'pg_catalog', 'securepush_relay'
AS $function$
DECLARE
    cap integer;
    current_count bigint;
    changed integer;
BEGIN
    SELECT max_tokens INTO cap FROM securepush_relay.installations WHERE id = p_installation FOR UPDATE;
    IF cap IS NOT NULL THEN
        -- Upper bound: the installation's tokens plus every named digest bound elsewhere or not at all.
        SELECT count(*) INTO current_count FROM (
            SELECT digest FROM securepush_relay.bindings WHERE installation_id = p_installation
            UNION SELECT unnest(p_digests)
        ) t;
        IF current_count > cap THEN
            RETURN -1;
        END IF;
    END IF;
    -- No FOR UPDATE here: the upsert below changes these rows in the same statement, and a row lock taken
    -- after that (unreferenced data-modifying CTEs run last) would skip them. The statement's snapshot
    -- still reads the previous owner; the upsert's own lock serializes concurrent binds of a digest.
    WITH previous AS (
        SELECT b.digest, b.installation_id FROM securepush_relay.bindings b
        WHERE b.digest = ANY (p_digests) AND b.installation_id <> p_installation
    ),
    audited AS (
        INSERT INTO securepush_relay.audit (event, installation_id, previous_installation_id)
        SELECT 'token_rebound', p_installation, previous.installation_id FROM previous
    ),
    upserted AS (
        INSERT INTO securepush_relay.bindings AS b (digest, installation_id)
        SELECT DISTINCT d, p_installation FROM unnest(p_digests) d
        ON CONFLICT (digest) DO UPDATE SET installation_id = excluded.installation_id, bound_at = now()
        WHERE b.installation_id <> excluded.installation_id
        RETURNING 1
    )
    SELECT count(*)::integer INTO changed FROM upserted;
    RETURN changed;
END
$function$;
REVOKE ALL ON FUNCTION securepush_relay.bind(p_installation uuid, p_digests bytea[]) FROM PUBLIC;
