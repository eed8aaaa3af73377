-- securepush.set_sealing_key: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.set_sealing_key(target_device uuid, seal_public bytea, seal_auth bytea)
 RETURNS boolean
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
#variable_conflict use_variable
DECLARE
    me record;
    rate integer := coalesce((SELECT value::integer FROM securepush.settings
        WHERE key = 'max_sealing_key_changes_per_hour'), 20);
    recent integer;
    oldest timestamptz;
BEGIN
    IF (seal_public IS NULL) <> (seal_auth IS NULL)
       OR (seal_public IS NOT NULL AND (octet_length(seal_public) <> 65 OR get_byte(seal_public, 0) <> 4
           OR octet_length(seal_auth) <> 16)) THEN
        RAISE EXCEPTION 'a sealing key is a 65-byte uncompressed P-256 point and a 16-byte auth secret'
            USING ERRCODE = '22023';
    END IF;
    SELECT d.id, d.user_id, d.platform INTO me FROM securepush.devices d WHERE d.id = target_device
        AND d.active FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF me.platform IN ('webpush', 'unifiedpush') AND seal_public IS NOT NULL THEN
        RAISE EXCEPTION 'Web Push and UnifiedPush devices seal with their subscription keys (p256dh, auth)'
            USING ERRCODE = '22023';
    END IF;
    -- The device row is locked: concurrent changes of one device are counted one after the other.
    SELECT count(*), min(a.at) INTO recent, oldest FROM securepush.audit_log a
    WHERE a.event IN ('sealing_key_set', 'sealing_key_cleared') AND a.device_id = me.id
        AND a.at > now() - interval '1 hour';
    IF rate > 0 AND recent >= rate THEN
        RAISE EXCEPTION 'too many sealing key changes for this device'
            USING ERRCODE = 'SPR01', DETAIL = greatest(1, ceil(extract(epoch
                FROM oldest + interval '1 hour' - now())))::integer::text;
    END IF;
    UPDATE securepush.devices d SET seal_public = set_sealing_key.seal_public, seal_auth = set_sealing_key.seal_auth,
        updated_at = now()
    WHERE d.id = me.id;
    PERFORM securepush.audit(CASE WHEN seal_public IS NULL THEN 'sealing_key_cleared' ELSE 'sealing_key_set' END,
        me.user_id, me.id,
                             me.platform);
    RETURN true;
END
$function$;
REVOKE ALL ON FUNCTION securepush.set_sealing_key(target_device uuid, seal_public bytea, seal_auth bytea) FROM PUBLIC;
