-- securepush.update_device_token: routine file (docs/sql.md).
--
-- A device's new push address. Its locks come in the order every registration takes them (the user's, the
-- token's, then the device rows, in id order), so two devices that swap addresses at once wait for each other
-- instead of deadlocking (issue 47: 3 of 10 concurrent swaps failed while this locked its own row first).
CREATE OR REPLACE FUNCTION securepush.update_device_token(target_device uuid, token text,
    options jsonb DEFAULT NULL::jsonb)
 RETURNS TABLE(device_id uuid, rebound_from text)
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
#variable_conflict use_variable
DECLARE
    me record;
    holder record;
    rate integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_registrations_per_hour'),
        60);
    recent integer;
    oldest timestamptz;
BEGIN
    SELECT d.id, d.user_id, d.platform, d.options INTO me FROM securepush.devices d
    WHERE d.id = target_device AND d.active;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- Registration's hourly budget bounds address changes too (one budget for both): a leaked credential
    -- cannot cycle through tokens retiring other devices.
    PERFORM securepush.lock_slot('devices', me.user_id);
    SELECT r.recent, r.oldest INTO recent, oldest FROM securepush.token_changes_last_hour(me.user_id) r;
    IF rate > 0 AND recent >= rate THEN
        RAISE EXCEPTION 'too many push address changes for this user'
            USING ERRCODE = 'SPR01', DETAIL = greatest(1, ceil(extract(epoch
                FROM oldest + interval '1 hour' - now())))::integer::text;
    END IF;
    PERFORM securepush.validate_device(me.platform, token, coalesce(options, me.options));
    PERFORM securepush.lock_slot('token', me.platform || ':' || token);
    -- This device and the token's holder, locked in id order; then this device checked again under its lock.
    PERFORM 1 FROM securepush.devices d
    WHERE d.id = me.id OR (d.platform = me.platform AND d.token = update_device_token.token)
    ORDER BY d.id FOR UPDATE;
    PERFORM 1 FROM securepush.devices d WHERE d.id = me.id AND d.active AND d.user_id = me.user_id;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT d.id, d.user_id, d.active INTO holder FROM securepush.devices d
    WHERE d.platform = me.platform AND d.token = update_device_token.token AND d.id <> me.id;
    IF FOUND THEN
        PERFORM securepush.deactivate_device(holder.id, 'token moved to another device');
        UPDATE securepush.devices d SET token = 'moved:' || d.id::text WHERE d.id = holder.id;
        IF holder.active THEN
            PERFORM securepush.audit('device_retired', holder.user_id, holder.id, 'token moved to another device');
        END IF;
        IF holder.user_id <> me.user_id THEN
            INSERT INTO securepush.audit_log (event, user_id, device_id, reason, previous_user_id, previous_device_id)
            VALUES ('device_rebound', me.user_id, me.id, me.platform, holder.user_id, holder.id);
            rebound_from := holder.user_id;
        END IF;
    END IF;
    UPDATE securepush.devices d
    SET token = update_device_token.token, options = coalesce(update_device_token.options, d.options),
        updated_at = now(),
        last_seen_at = now()
    WHERE d.id = me.id;
    PERFORM securepush.audit('device_token_updated', me.user_id, me.id, me.platform);
    device_id := me.id;
    RETURN NEXT;
END
$function$;
REVOKE ALL ON FUNCTION securepush.update_device_token(target_device uuid, token text, options jsonb) FROM PUBLIC;
