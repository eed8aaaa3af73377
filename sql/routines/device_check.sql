-- securepush.device_check: routine file (docs/sql.md).
--
-- The credential check, replacing 007's: a correct credential of an active device is granted whatever
-- the throttle says (256-bit secrets cannot be guessed online, so a block only has to stop failures;
-- a blocked device id or client address must never lock out the honest device). `blocked_for` still
-- tells how long a throttle key is blocked, for the caller to answer a refused credential with 429.
CREATE OR REPLACE FUNCTION securepush.device_check(p_device uuid, p_secret_hash bytea, p_throttle_keys text[],
    OUT user_id text, OUT blocked_for double precision)
 RETURNS record
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    owner text;
    stored bytea;
    is_active boolean;
    seen timestamptz;
BEGIN
    SELECT d.user_id, d.secret_hash, d.active, d.last_seen_at INTO owner, stored, is_active, seen
    FROM securepush.devices d WHERE d.id = p_device;
    IF coalesce(stored, '\x7e644e95075aaf8040509175894c5cdb329f0ed60360c04cfb69b4825304b460'::bytea) IS DISTINCT
        FROM p_secret_hash
       OR stored IS NULL OR is_active IS NOT TRUE THEN
        blocked_for := securepush.auth_blocked_for(p_throttle_keys);
        RETURN;
    END IF;
    blocked_for := 0;
    IF seen IS NULL OR seen < now() - interval '1 minute' THEN
        UPDATE securepush.devices d SET last_seen_at = now() WHERE d.id = p_device;
    END IF;
    user_id := owner;
END
$function$;
REVOKE ALL ON FUNCTION securepush.device_check(p_device uuid, p_secret_hash bytea, p_throttle_keys text[],
    OUT user_id text, OUT blocked_for double precision) FROM PUBLIC;
