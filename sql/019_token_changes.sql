-- Token changes and registrations (issue 32, items 4 and 5).
--
-- 1. One hourly budget. `PUT /v1/devices/current/token` and registration each counted only their own audit
--    event, so a user had 60 + 60 where the README promises one shared SECUREPUSH_MAX_REGISTRATIONS_PER_HOUR.
--    Both now count both events (each through its own partial index).
-- 2. No race on a token. Two devices changing to the same new token at once, or a change racing a registration
--    of that token, both passed the "who holds it" check and one then failed on devices_platform_token_unique
--    (a 500 in 8 of 12 races). Both functions now take a transaction lock on the (platform, token) pair after the
--    user's lock (always in that order, so they cannot deadlock), and the second sees the first's result: the
--    token moves again (a change) or is re-bound (a registration), as if they had come one after the other.
-- 3. Sealing keys follow the registration. A re-registration of a token kept the stored sealing key although
--    it answered "sealing": false, and when another user had registered the token with his own key first, the
--    owner's previews were sealed to that key. A registration now starts without a key; the API sets the one
--    its request carries in the same statement (securepush.set_sealing_key), so the answer tells the truth.
--    A token change keeps the device's key: the key belongs to the device credential that sends the change,
--    not to the token.
--
-- Both keep 018's `jit = off` (a CREATE OR REPLACE resets a function's settings to those it states).

-- The user's registrations and token changes of the last hour (one budget), and the oldest of them: each event
-- counted through its own partial index (audit_log_registrations_idx, audit_log_token_updates_idx).
CREATE FUNCTION securepush.token_changes_last_hour(p_user text, OUT recent integer, OUT oldest timestamptz)
LANGUAGE sql STABLE
AS $$
    SELECT (r.n + t.n)::integer, least(r.oldest, t.oldest)
    FROM (SELECT count(*) AS n, min(a.at) AS oldest FROM securepush.audit_log a
          WHERE a.event = 'device_registered' AND a.user_id = p_user AND a.at > now() - interval '1 hour') r,
         (SELECT count(*) AS n, min(a.at) AS oldest FROM securepush.audit_log a
          WHERE a.event = 'device_token_updated' AND a.user_id = p_user AND a.at > now() - interval '1 hour') t
$$;

CREATE OR REPLACE FUNCTION securepush.register_device_checked(user_id text, platform text, token text, options jsonb DEFAULT '{}'::jsonb)
RETURNS TABLE (device_id uuid, device_secret text, rebound_from text)
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_variable
DECLARE
    secret bytea := gen_random_bytes(32);
    new_id uuid;
    cap integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_devices_per_user'), 20);
    rate integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_registrations_per_hour'), 60);
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
    PERFORM pg_advisory_xact_lock(hashtextextended('securepush.devices:' || user_id, 0));
    SELECT r.recent, r.oldest INTO recent, oldest FROM securepush.token_changes_last_hour(user_id) r;
    IF rate > 0 AND recent >= rate THEN
        -- Audited by the caller: this transaction is rolled back.
        RAISE EXCEPTION 'too many device registrations for this user'
            USING ERRCODE = 'SPR01', DETAIL = greatest(1, ceil(extract(epoch FROM oldest + interval '1 hour' - now())))::integer::text;
    END IF;
    -- One change at a time per token (after the user's lock, as update_device_token takes them).
    PERFORM pg_advisory_xact_lock(hashtextextended('securepush.token:' || platform || ':' || token, 0));
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
$$;

CREATE OR REPLACE FUNCTION securepush.update_device_token(target_device uuid, token text, options jsonb DEFAULT NULL)
RETURNS TABLE (device_id uuid, rebound_from text)
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_variable
DECLARE
    me record;
    holder record;
    rate integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_registrations_per_hour'), 60);
    recent integer;
    oldest timestamptz;
BEGIN
    SELECT d.id, d.user_id, d.platform, d.options INTO me FROM securepush.devices d
    WHERE d.id = target_device AND d.active FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- Registration's hourly budget bounds address changes too (one budget for both): a leaked credential
    -- cannot cycle through tokens retiring other devices.
    PERFORM pg_advisory_xact_lock(hashtextextended('securepush.devices:' || me.user_id, 0));
    SELECT r.recent, r.oldest INTO recent, oldest FROM securepush.token_changes_last_hour(me.user_id) r;
    IF rate > 0 AND recent >= rate THEN
        RAISE EXCEPTION 'too many push address changes for this user'
            USING ERRCODE = 'SPR01', DETAIL = greatest(1, ceil(extract(epoch FROM oldest + interval '1 hour' - now())))::integer::text;
    END IF;
    PERFORM securepush.validate_device(me.platform, token, coalesce(options, me.options));
    PERFORM pg_advisory_xact_lock(hashtextextended('securepush.token:' || me.platform || ':' || token, 0));
    SELECT d.id, d.user_id, d.active INTO holder FROM securepush.devices d
    WHERE d.platform = me.platform AND d.token = update_device_token.token AND d.id <> me.id
    FOR UPDATE;
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
    SET token = update_device_token.token, options = coalesce(update_device_token.options, d.options), updated_at = now(),
        last_seen_at = now()
    WHERE d.id = me.id;
    PERFORM securepush.audit('device_token_updated', me.user_id, me.id, me.platform);
    device_id := me.id;
    RETURN NEXT;
END
$$;
