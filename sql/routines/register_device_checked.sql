-- securepush.register_device_checked: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.register_device_checked(user_id text, platform text, token text,
    options jsonb DEFAULT '{}'::jsonb)
 RETURNS TABLE(device_id uuid, device_secret text, rebound_from text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
#variable_conflict use_variable
DECLARE
    secret bytea := securepush.gen_random_bytes(32);
    new_id uuid;
    cap integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_devices_per_user'), 20);
    rate integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_registrations_per_hour'),
        60);
    recent integer;
    oldest timestamptz;
    previous record;
    retired record;
BEGIN
    IF user_id IS NULL OR length(user_id) NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'user_id must be 1 to 256 characters' USING ERRCODE = '22023';
    END IF;
    PERFORM securepush.validate_device(platform, token, coalesce(options, '{}'::jsonb));
    -- One registration at a time per user, so two new phones cannot both slip under the cap or the rate.
    PERFORM securepush.lock_slot('devices', user_id);
    SELECT r.recent, r.oldest INTO recent, oldest FROM securepush.token_changes_last_hour(user_id) r;
    IF rate > 0 AND recent >= rate THEN
        -- Audited by the caller: this transaction is rolled back.
        RAISE EXCEPTION 'too many device registrations for this user'
            USING ERRCODE = 'SPR01', DETAIL = greatest(1, ceil(extract(epoch
                FROM oldest + interval '1 hour' - now())))::integer::text;
    END IF;
    -- One change at a time per token (after the user's lock, as update_device_token takes them).
    PERFORM securepush.lock_slot('token', platform || ':' || token);
    SELECT d.id, d.user_id INTO previous FROM securepush.devices d
    WHERE d.platform = register_device_checked.platform AND d.token = register_device_checked.token
    FOR UPDATE;
    INSERT INTO securepush.devices AS d (user_id, platform, token, options, secret_hash)
    VALUES (user_id, platform, token, coalesce(options, '{}'::jsonb), sha256(secret))
    ON CONFLICT ON CONSTRAINT devices_platform_token_unique DO UPDATE
        SET user_id = EXCLUDED.user_id, options = EXCLUDED.options, secret_hash = EXCLUDED.secret_hash,
            active = true, deactivated_reason = NULL, updated_at = now(), last_seen_at = now(),
            seal_public = NULL, seal_auth = NULL
    RETURNING d.id INTO new_id;
    -- A token that moved to another user must not receive the previous user's pending pushes.
    PERFORM securepush.cancel_pending_deliveries(new_id, 'device re-registered to another user', user_id);
    PERFORM securepush.audit('device_registered', user_id, new_id, platform);
    IF previous.user_id IS NOT NULL AND previous.user_id <> user_id THEN
        INSERT INTO securepush.audit_log (event, user_id, device_id, reason, previous_user_id, previous_device_id)
        VALUES ('device_rebound', user_id, new_id, platform, previous.user_id, previous.id);
        rebound_from := previous.user_id;
    END IF;
    FOR retired IN
        SELECT d.id FROM securepush.devices d
        WHERE d.user_id = register_device_checked.user_id AND d.active AND d.id <> new_id
        ORDER BY coalesce(d.last_seen_at, d.updated_at) DESC, d.id DESC
        OFFSET greatest(cap - 1, 0)
    LOOP
        PERFORM securepush.deactivate_device(retired.id, 'retired: over the per-user device limit');
        PERFORM securepush.audit('device_retired', user_id, retired.id, 'over the per-user device limit');
    END LOOP;
    device_id := new_id;
    device_secret := rtrim(translate(encode(secret, 'base64'), '+/', '-_'), '=');
    RETURN NEXT;
END
$function$;
REVOKE ALL ON FUNCTION securepush.register_device_checked(user_id text, platform text, token text,
    options jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.register_device_checked(user_id text, platform text, token text,
    options jsonb) TO securepush_accounts;
