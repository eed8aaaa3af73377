-- securepush.set_relay_platforms: routine file (docs/sql.md).
--
-- Records which platforms are relayed; a platform newly relayed has every active device queued for a bind.
-- Returns how many were queued.
CREATE OR REPLACE FUNCTION securepush.set_relay_platforms(p_platforms text[])
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'securepush'
 SET jit TO 'off'
AS $function$
DECLARE
    previous text[];
    queued integer;
BEGIN
    PERFORM securepush.lock_slot('relay_platforms', 'relay_platforms');
    previous := securepush.relay_platforms();
    INSERT INTO securepush.settings (key, value) VALUES ('relay_platforms', array_to_string(p_platforms, ','))
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now();
    INSERT INTO securepush.relay_outbox (platform, token, action)
    SELECT d.platform, d.token, 'bind' FROM securepush.devices d
    WHERE d.active AND d.platform = ANY (p_platforms) AND NOT d.platform = ANY (previous)
    ORDER BY d.created_at;
    GET DIAGNOSTICS queued = ROW_COUNT;
    RETURN queued;
END
$function$;
REVOKE ALL ON FUNCTION securepush.set_relay_platforms(p_platforms text[]) FROM PUBLIC;
