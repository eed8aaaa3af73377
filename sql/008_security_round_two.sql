-- Security, round two: a correct credential always works, re-bound push tokens name their previous
-- owner, registrations are rate-limited per user, and retired devices are deleted after a retention.

-- The audit log's new events and the previous owner of a re-bound push token.
ALTER TABLE securepush.audit_log DROP CONSTRAINT audit_log_event_valid;
ALTER TABLE securepush.audit_log ADD CONSTRAINT audit_log_event_valid CHECK (event IN (
    'device_registered', 'device_rotated', 'device_revoked', 'device_retired', 'throttled', 'token_invalid',
    'device_rebound', 'registration_limited', 'device_deleted'));
ALTER TABLE securepush.audit_log ADD COLUMN previous_user_id text;
ALTER TABLE securepush.audit_log ADD COLUMN previous_device_id uuid;

-- The registration rate: at most `max_registrations_per_hour` registrations per user in any hour
-- (`SECUREPUSH_MAX_REGISTRATIONS_PER_HOUR`, written by `serve` and `migrate`), counted on the audit log.
INSERT INTO securepush.settings (key, value) VALUES ('max_registrations_per_hour', '60') ON CONFLICT (key) DO NOTHING;
CREATE INDEX audit_log_registrations_idx ON securepush.audit_log (user_id, at) WHERE event = 'device_registered';

-- The credential check, replacing 007's: a correct credential of an active device is granted whatever
-- the throttle says (256-bit secrets cannot be guessed online, so a block only has to stop failures;
-- a blocked device id or client address must never lock out the honest device). `blocked_for` still
-- tells how long a throttle key is blocked, for the caller to answer a refused credential with 429.
CREATE OR REPLACE FUNCTION securepush.device_check(
    p_device uuid, p_secret_hash bytea, p_throttle_keys text[], OUT user_id text, OUT blocked_for double precision
)
LANGUAGE plpgsql AS $$
DECLARE
    owner text;
    stored bytea;
    is_active boolean;
    seen timestamptz;
BEGIN
    SELECT d.user_id, d.secret_hash, d.active, d.last_seen_at INTO owner, stored, is_active, seen
    FROM securepush.devices d WHERE d.id = p_device;
    IF coalesce(stored, '\x7e644e95075aaf8040509175894c5cdb329f0ed60360c04cfb69b4825304b460'::bytea) IS DISTINCT FROM p_secret_hash
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
$$;

-- Registration with what the API needs to know: `register_device`'s work, plus the user the push token
-- belonged to when it was bound to another user (`rebound_from`, NULL otherwise). A token that moves
-- to another user is audited as `device_rebound` with the previous user and device. Over the hourly
-- registration rate the call fails with SQLSTATE 'SPR01' and the seconds to wait in its DETAIL (the API
-- audits it as `registration_limited`).
CREATE FUNCTION securepush.register_device_checked(user_id text, platform text, token text, options jsonb DEFAULT '{}'::jsonb)
RETURNS TABLE (device_id uuid, device_secret text, rebound_from text)
LANGUAGE plpgsql AS $$
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
    SELECT count(*), min(a.at) INTO recent, oldest FROM securepush.audit_log a
    WHERE a.event = 'device_registered' AND a.user_id = register_device_checked.user_id AND a.at > now() - interval '1 hour';
    IF rate > 0 AND recent >= rate THEN
        -- Audited by the caller: this transaction is rolled back.
        RAISE EXCEPTION 'too many device registrations for this user'
            USING ERRCODE = 'SPR01', DETAIL = greatest(1, ceil(extract(epoch FROM oldest + interval '1 hour' - now())))::integer::text;
    END IF;
    SELECT d.id, d.user_id INTO previous FROM securepush.devices d
    WHERE d.platform = register_device_checked.platform AND d.token = register_device_checked.token
    FOR UPDATE;
    INSERT INTO securepush.devices AS d (user_id, platform, token, options, secret_hash)
    VALUES (user_id, platform, token, coalesce(options, '{}'::jsonb), sha256(secret))
    ON CONFLICT ON CONSTRAINT devices_platform_token_unique DO UPDATE
        SET user_id = EXCLUDED.user_id, options = EXCLUDED.options, secret_hash = EXCLUDED.secret_hash,
            active = true, deactivated_reason = NULL, updated_at = now(), last_seen_at = now()
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

-- The producers' registration function keeps its name and result (003's), now with the rate limit and
-- the re-bind audit of `register_device_checked`.
CREATE OR REPLACE FUNCTION securepush.register_device(user_id text, platform text, token text, options jsonb DEFAULT '{}'::jsonb)
RETURNS TABLE (device_id uuid, device_secret text)
LANGUAGE sql AS $$
    SELECT r.device_id, r.device_secret FROM securepush.register_device_checked(user_id, platform, token, options) r
$$;

-- Deletes devices that have been inactive (retired, revoked, unregistered, token invalid) for longer
-- than `retention` (`SECUREPUSH_DEVICE_RETENTION`), at most `batch` per call, each audited as
-- `device_deleted`; their remaining deliveries go with them (ON DELETE CASCADE). Returns how many were deleted.
CREATE FUNCTION securepush.delete_retired_devices(retention interval, batch integer DEFAULT 1000) RETURNS integer
LANGUAGE sql AS $$
    WITH gone AS (
        DELETE FROM securepush.devices
        WHERE id = ANY (ARRAY(
            SELECT d.id FROM securepush.devices d
            WHERE NOT d.active AND d.updated_at < now() - retention
            LIMIT batch
        ))
        RETURNING id, user_id
    ),
    audited AS (
        INSERT INTO securepush.audit_log (event, user_id, device_id, reason)
        SELECT 'device_deleted', g.user_id, g.id, 'inactive past the device retention' FROM gone g
    )
    SELECT count(*)::integer FROM gone
$$;

CREATE INDEX devices_inactive_idx ON securepush.devices (updated_at) WHERE NOT active;
