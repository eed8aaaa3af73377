-- securepush.lock_slot: routine file (docs/sql.md).
--
-- Serialises the server's own changes of one key (a user's devices, a push address, a user's muted
-- categories, the relayed platforms) with a row lock in securepush.lock_slots, a table no producer may read
-- or lock: an advisory key, which any login may take and hold, let a producer block a chosen user's
-- registrations (issue 47). Each kind has 4,096 slots, so keys that share a slot wait for each other only for
-- as long as the other change's transaction. A transaction that takes several kinds takes them in the order
-- devices, token (register_device_checked, update_device_token), so two never wait for each other.
CREATE OR REPLACE FUNCTION securepush.lock_slot(p_kind text, p_key text)
 RETURNS void
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    kind integer := array_position(ARRAY['devices', 'token', 'category_mutes', 'relay_platforms'], p_kind);
BEGIN
    IF kind IS NULL OR p_key IS NULL THEN
        RAISE EXCEPTION 'lock_slot: unknown kind %', p_kind;
    END IF;
    PERFORM 1 FROM securepush.lock_slots s
    WHERE s.slot = (kind - 1) * 4096 + (hashtextextended(p_key, 0) & 4095)::integer
    FOR NO KEY UPDATE;
END
$function$;
REVOKE ALL ON FUNCTION securepush.lock_slot(p_kind text, p_key text) FROM PUBLIC;
