-- securepush_relay.admit: routine file (docs/sql.md).
--
-- A push request in one round trip (issue 33's speed aims): the relay checks a request's signature with the
-- installation's key cached in memory, then this one call confirms that key is still the installation's
-- (its key_version) and that the installation is enabled, records the request id (a replay is refused),
-- finds which of the named digests are bound to the installation and takes the quota for the pushes to them. Before,
-- the same took three round trips (the key, the request id, the bindings with the quota).
--
-- Verdicts: 'ok'; 'stale' (no such installation, or its key changed since the relay cached it: nothing was
-- written, the relay reloads the key and checks the signature again); 'disabled'; 'replay' (the request id
-- was seen). `wait` is take_quota's answer (0: counted) for 'ok' with bound digests, else 0. An installation
-- without quotas writes no usage row per request: `counted` is false and the relay counts its pushes in memory,
-- adding them every second (`add_usage`); with a quota, `take_quota` counts them here (`counted`).
CREATE OR REPLACE FUNCTION securepush_relay.admit(p_installation uuid, p_key_version integer, p_jti text,
    p_expires timestamp with time zone, p_digests bytea[], OUT verdict text, OUT bound bytea[],
    OUT wait double precision, OUT counted boolean)
 RETURNS record
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush_relay'
 SET jit TO 'off'
AS $function$
DECLARE
    version integer;
    disabled boolean;
    limited boolean;
BEGIN
    bound := '{}';
    wait := 0;
    counted := false;
    SELECT i.key_version, i.disabled_at IS NOT NULL, i.pushes_per_minute IS NOT NULL OR i.pushes_per_day IS NOT NULL
    INTO version, disabled, limited
    FROM securepush_relay.installations i WHERE i.id = p_installation;
    IF NOT FOUND OR version <> p_key_version THEN
        verdict := 'stale';
        RETURN;
    END IF;
    IF disabled THEN
        verdict := 'disabled';
        RETURN;
    END IF;
    INSERT INTO securepush_relay.request_ids (jti, expires_at) VALUES (p_jti, p_expires) ON CONFLICT (jti) DO NOTHING;
    IF NOT FOUND THEN
        verdict := 'replay';
        RETURN;
    END IF;
    verdict := 'ok';
    IF cardinality(p_digests) > 0 THEN
        SELECT coalesce(array_agg(b.digest), '{}') INTO bound FROM securepush_relay.bindings b
        WHERE b.installation_id = p_installation AND b.digest = ANY (p_digests);
        IF cardinality(bound) > 0 AND limited THEN
            -- Each push counts, a token named twice in one batch twice (issue 48: counting distinct tokens let a
            -- batch name one bound token 500 times for the price of one).
            wait := securepush_relay.take_quota(p_installation,
                (SELECT count(*)::integer FROM unnest(p_digests) d WHERE d = ANY (bound)));
            counted := true;
        END IF;
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION securepush_relay.admit(p_installation uuid, p_key_version integer, p_jti text,
    p_expires timestamp with time zone, p_digests bytea[], OUT verdict text, OUT bound bytea[],
    OUT wait double precision, OUT counted boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush_relay.admit(p_installation uuid, p_key_version integer, p_jti text,
    p_expires timestamp with time zone, p_digests bytea[], OUT verdict text, OUT bound bytea[],
    OUT wait double precision, OUT counted boolean) TO securepush_relay_service;
