-- Device credentials, the SQL registration API, and payload purging.

CREATE EXTENSION IF NOT EXISTS pgcrypto;

-- Validates a device's platform, token and options; raises 22023 with a message fit for the caller.
CREATE FUNCTION securepush.validate_device(platform text, token text, options jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    allowed text[];
    unknown text;
    option_value text;
BEGIN
    IF platform IS NULL OR platform NOT IN ('apns', 'fcm', 'wns', 'webpush', 'simulated') THEN
        RAISE EXCEPTION 'platform must be one of apns, fcm, wns, webpush, simulated' USING ERRCODE = '22023';
    END IF;
    IF token IS NULL OR length(token) NOT BETWEEN 1 AND 4096 THEN
        RAISE EXCEPTION 'token must be 1 to 4096 characters' USING ERRCODE = '22023';
    END IF;
    IF options IS NULL OR jsonb_typeof(options) <> 'object' THEN
        RAISE EXCEPTION 'platform options must be a JSON object' USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_each(options) e WHERE jsonb_typeof(e.value) <> 'string' OR length(e.value #>> '{}') > 512) THEN
        RAISE EXCEPTION 'platform options must be strings of at most 512 characters' USING ERRCODE = '22023';
    END IF;

    allowed := CASE platform
        WHEN 'apns' THEN ARRAY['environment', 'push_style', 'topic']
        WHEN 'fcm' THEN ARRAY['project']
        WHEN 'wns' THEN ARRAY[]::text[]
        WHEN 'webpush' THEN ARRAY['p256dh', 'auth', 'urgency']
        ELSE ARRAY['push_style', 'topic']
    END;
    SELECT string_agg(k, ', ' ORDER BY k) INTO unknown FROM jsonb_object_keys(options) k WHERE k <> ALL (allowed);
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'unknown option(s) for platform %: % (allowed: %)', platform, unknown, coalesce(nullif(array_to_string(allowed, ', '), ''), 'none')
            USING ERRCODE = '22023';
    END IF;

    option_value := options ->> 'environment';
    IF option_value IS NOT NULL AND option_value NOT IN ('production', 'sandbox') THEN
        RAISE EXCEPTION 'environment must be production or sandbox' USING ERRCODE = '22023';
    END IF;
    option_value := options ->> 'push_style';
    IF option_value IS NOT NULL AND option_value NOT IN ('silent', 'alert') THEN
        RAISE EXCEPTION 'push_style must be silent or alert' USING ERRCODE = '22023';
    END IF;
    option_value := options ->> 'topic';
    IF option_value IS NOT NULL AND option_value !~ '^[A-Za-z0-9][A-Za-z0-9.-]{0,254}$' THEN
        RAISE EXCEPTION 'topic must be a bundle id such as com.example.app' USING ERRCODE = '22023';
    END IF;

    CASE platform
    WHEN 'apns' THEN
        IF token !~ '^[0-9A-Fa-f]+$' OR length(token) NOT BETWEEN 32 AND 400 OR length(token) % 2 <> 0 THEN
            RAISE EXCEPTION 'an APNs device token is an even number of hexadecimal digits' USING ERRCODE = '22023';
        END IF;
    WHEN 'fcm' THEN
        IF token !~ '^[A-Za-z0-9_:.-]+$' OR length(token) < 20 THEN
            RAISE EXCEPTION 'an FCM registration token has 20 or more characters of A-Z a-z 0-9 _ : . -' USING ERRCODE = '22023';
        END IF;
    WHEN 'wns' THEN
        IF token !~ '^https://[A-Za-z0-9.-]+(:[0-9]+)?/' THEN
            RAISE EXCEPTION 'a WNS channel URI must be an https URL' USING ERRCODE = '22023';
        END IF;
    WHEN 'webpush' THEN
        IF token !~ '^https://[A-Za-z0-9.-]+(:[0-9]+)?/' THEN
            RAISE EXCEPTION 'a Web Push endpoint must be an https URL' USING ERRCODE = '22023';
        END IF;
        IF coalesce(options ->> 'p256dh', '') !~ '^[A-Za-z0-9_-]{86,88}={0,2}$' THEN
            RAISE EXCEPTION 'a Web Push subscription needs its p256dh key (base64url, 65 bytes)' USING ERRCODE = '22023';
        END IF;
        IF coalesce(options ->> 'auth', '') !~ '^[A-Za-z0-9_-]{22}={0,2}$' THEN
            RAISE EXCEPTION 'a Web Push subscription needs its auth secret (base64url, 16 bytes)' USING ERRCODE = '22023';
        END IF;
        option_value := options ->> 'urgency';
        IF option_value IS NOT NULL AND option_value NOT IN ('very-low', 'low', 'normal', 'high') THEN
            RAISE EXCEPTION 'urgency must be very-low, low, normal or high' USING ERRCODE = '22023';
        END IF;
    ELSE
        NULL;
    END CASE;
END
$$;

-- Moves a device's pending deliveries to the history as cancelled (optionally only other users' notifications).
CREATE FUNCTION securepush.cancel_pending_deliveries(target_device uuid, reason text, keep_user text DEFAULT NULL) RETURNS integer
LANGUAGE sql AS $$
    WITH gone AS (
        DELETE FROM securepush.deliveries dl
        USING securepush.notifications n
        WHERE dl.device_id = target_device AND dl.state = 'pending' AND n.id = dl.notification_id
          AND (keep_user IS NULL OR n.user_id <> keep_user)
        RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at
    ),
    logged AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error, created_at)
        SELECT id, notification_id, device_id, platform, 'cancelled', attempts, reason, created_at FROM gone
        RETURNING 1
    )
    SELECT count(*)::integer FROM logged
$$;

-- Registers (or re-registers) a device for a user. Returns the device id and a new 256-bit secret,
-- shown once: only its SHA-256 is stored. Re-registering a (platform, token) rotates the secret,
-- re-binds the device to this user and reactivates it.
CREATE FUNCTION securepush.register_device(user_id text, platform text, token text, options jsonb DEFAULT '{}'::jsonb)
RETURNS TABLE (device_id uuid, device_secret text)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    secret bytea := gen_random_bytes(32);
    new_id uuid;
BEGIN
    IF user_id IS NULL OR length(user_id) NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'user_id must be 1 to 256 characters' USING ERRCODE = '22023';
    END IF;
    PERFORM securepush.validate_device(platform, token, coalesce(options, '{}'::jsonb));
    INSERT INTO securepush.devices AS d (user_id, platform, token, options, secret_hash)
    VALUES (user_id, platform, token, coalesce(options, '{}'::jsonb), sha256(secret))
    ON CONFLICT ON CONSTRAINT devices_platform_token_unique DO UPDATE
        SET user_id = EXCLUDED.user_id, options = EXCLUDED.options, secret_hash = EXCLUDED.secret_hash,
            active = true, deactivated_reason = NULL, updated_at = now()
    RETURNING d.id INTO new_id;
    -- A token that moved to another user must not receive the previous user's pending pushes.
    PERFORM securepush.cancel_pending_deliveries(new_id, 'device re-registered to another user', user_id);
    device_id := new_id;
    device_secret := rtrim(translate(encode(secret, 'base64'), '+/', '-_'), '=');
    RETURN NEXT;
END
$$;

-- Deactivates a device (its credential stops working) and cancels its pending deliveries.
CREATE FUNCTION securepush.deactivate_device(device_id uuid, reason text DEFAULT 'unregistered') RETURNS boolean
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    changed boolean;
BEGIN
    UPDATE securepush.devices d SET active = false, deactivated_reason = reason, updated_at = now()
    WHERE d.id = device_id AND d.active;
    changed := FOUND;
    PERFORM securepush.cancel_pending_deliveries(device_id, 'device deactivated: ' || reason);
    RETURN changed;
END
$$;

-- Drops payloads of expired notifications, and of read ones after `after_read` when set.
CREATE FUNCTION securepush.purge_payloads(after_read interval DEFAULT NULL, batch integer DEFAULT 10000) RETURNS integer
LANGUAGE sql AS $$
    WITH purged AS (
        UPDATE securepush.notifications n SET payload = NULL, purged_at = now()
        WHERE n.id IN (
            SELECT id FROM securepush.notifications
            WHERE purged_at IS NULL
              AND (expires_at <= now() OR (after_read IS NOT NULL AND read_at <= now() - after_read))
            LIMIT batch
            FOR UPDATE SKIP LOCKED
        )
        RETURNING 1
    )
    SELECT count(*)::integer FROM purged
$$;

CREATE INDEX notifications_read_idx ON securepush.notifications (read_at) WHERE purged_at IS NULL AND read_at IS NOT NULL;
CREATE INDEX notifications_unread_idx ON securepush.notifications (user_id, created_at DESC, id DESC) WHERE read_at IS NULL;

-- When the current lease began: a "token invalid" answer only deactivates a device that was not
-- re-registered after the push was attempted (APNs' 410 timestamp rule, for every platform).
ALTER TABLE securepush.deliveries ADD COLUMN claimed_at timestamptz;
