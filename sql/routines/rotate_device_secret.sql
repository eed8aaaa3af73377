-- securepush.rotate_device_secret: routine file (docs/sql.md).
--
-- Keys rotate with the device secret: a new secret replaces the sealing key with the one given (NULLs: none,
-- so the device gets id-only pushes until it sets one). The one-argument form clears it.
CREATE OR REPLACE FUNCTION securepush.rotate_device_secret(target_device uuid)
 RETURNS TABLE(device_id uuid, device_secret text)
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    secret bytea := securepush.gen_random_bytes(32);
    owner text;
BEGIN
    UPDATE securepush.devices d SET secret_hash = sha256(secret), seal_public = NULL, seal_auth = NULL,
        updated_at = now()
    WHERE d.id = target_device AND d.active
    RETURNING d.user_id INTO owner;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    PERFORM securepush.audit('device_rotated', owner, target_device, NULL);
    device_id := target_device;
    device_secret := rtrim(translate(encode(secret, 'base64'), '+/', '-_'), '=');
    RETURN NEXT;
END
$function$;
REVOKE ALL ON FUNCTION securepush.rotate_device_secret(target_device uuid) FROM PUBLIC;
CREATE OR REPLACE FUNCTION securepush.rotate_device_secret(target_device uuid, seal_public bytea, seal_auth bytea)
 RETURNS TABLE(device_id uuid, device_secret text, sealing boolean)
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
#variable_conflict use_column
DECLARE
    rotated record;
BEGIN
    SELECT r.device_id, r.device_secret INTO rotated FROM securepush.rotate_device_secret(target_device) r;
    IF rotated.device_id IS NULL THEN
        RETURN;
    END IF;
    IF seal_public IS NOT NULL THEN
        PERFORM securepush.set_sealing_key(target_device, seal_public, seal_auth);
    END IF;
    RETURN QUERY SELECT rotated.device_id, rotated.device_secret, seal_public IS NOT NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.rotate_device_secret(target_device uuid, seal_public bytea,
    seal_auth bytea) FROM PUBLIC;
