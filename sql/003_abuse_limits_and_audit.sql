-- Abuse limits and the security audit log: a cap on active devices per user, secret rotation,
-- retirement of devices not seen for long, throttling of failed authentication, and an append-only
-- record of security events (ids and reasons only: never secrets, tokens or payloads).

-- The security events. Append-only: UPDATE and DELETE are refused (pruning runs as a separate,
-- explicit function that removes whole old rows by age).
CREATE TABLE securepush.audit_log (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT now(),
    event      text NOT NULL CONSTRAINT audit_log_event_valid CHECK (event IN (
                   'device_registered', 'device_rotated', 'device_revoked', 'device_retired', 'throttled', 'token_invalid')),
    user_id    text,
    device_id  uuid,
    reason     text CONSTRAINT audit_log_reason_short CHECK (length(reason) <= 200)
);

CREATE INDEX audit_log_at_idx ON securepush.audit_log (at);

CREATE FUNCTION securepush.audit_log_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('securepush.pruning_audit_log', true) = 'on' AND TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'securepush.audit_log is append-only' USING ERRCODE = '42501';
END
$$;

CREATE TRIGGER audit_log_append_only
BEFORE UPDATE OR DELETE ON securepush.audit_log
FOR EACH ROW EXECUTE FUNCTION securepush.audit_log_append_only();

-- Deletes audit rows older than `retention` (the only way rows leave the log).
CREATE FUNCTION securepush.prune_audit_log(retention interval) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    removed integer;
BEGIN
    PERFORM set_config('securepush.pruning_audit_log', 'on', true);
    DELETE FROM securepush.audit_log WHERE at < now() - retention;
    GET DIAGNOSTICS removed = ROW_COUNT;
    PERFORM set_config('securepush.pruning_audit_log', 'off', true);
    RETURN removed;
END
$$;

CREATE FUNCTION securepush.audit(event text, user_id text, device_id uuid, reason text DEFAULT NULL) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO securepush.audit_log (event, user_id, device_id, reason) VALUES (event, user_id, device_id, left(reason, 200))
$$;

-- The cap on active devices per user (`SECUREPUSH_MAX_DEVICES_PER_USER`, written by `serve` and `migrate`).
INSERT INTO securepush.settings (key, value) VALUES ('max_devices_per_user', '20') ON CONFLICT (key) DO NOTHING;

CREATE INDEX devices_user_seen_idx ON securepush.devices (user_id, (coalesce(last_seen_at, updated_at))) WHERE active;

-- Registration with the cap: registering one device more than the cap retires the user's least recently
-- seen active devices (deactivated, pending deliveries cancelled), so a new phone always works.
-- Replaces 002's function of the same signature; the SQL registration route keeps its name and result.
CREATE OR REPLACE FUNCTION securepush.register_device(user_id text, platform text, token text, options jsonb DEFAULT '{}'::jsonb)
RETURNS TABLE (device_id uuid, device_secret text)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    secret bytea := gen_random_bytes(32);
    new_id uuid;
    cap integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_devices_per_user'), 20);
    retired record;
BEGIN
    IF user_id IS NULL OR length(user_id) NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'user_id must be 1 to 256 characters' USING ERRCODE = '22023';
    END IF;
    PERFORM securepush.validate_device(platform, token, coalesce(options, '{}'::jsonb));
    -- One registration at a time per user, so two new phones cannot both slip under the cap.
    PERFORM pg_advisory_xact_lock(hashtextextended('securepush.devices:' || user_id, 0));
    INSERT INTO securepush.devices AS d (user_id, platform, token, options, secret_hash)
    VALUES (user_id, platform, token, coalesce(options, '{}'::jsonb), sha256(secret))
    ON CONFLICT ON CONSTRAINT devices_platform_token_unique DO UPDATE
        SET user_id = EXCLUDED.user_id, options = EXCLUDED.options, secret_hash = EXCLUDED.secret_hash,
            active = true, deactivated_reason = NULL, updated_at = now(), last_seen_at = now()
    RETURNING d.id INTO new_id;
    -- A token that moved to another user must not receive the previous user's pending pushes.
    PERFORM securepush.cancel_pending_deliveries(new_id, 'device re-registered to another user', user_id);
    PERFORM securepush.audit('device_registered', user_id, new_id, platform);
    FOR retired IN
        SELECT d.id FROM securepush.devices d
        WHERE d.user_id = register_device.user_id AND d.active AND d.id <> new_id
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

-- A new secret for an active device; the old one stops working in the same statement.
CREATE FUNCTION securepush.rotate_device_secret(target_device uuid)
RETURNS TABLE (device_id uuid, device_secret text)
LANGUAGE plpgsql AS $$
DECLARE
    secret bytea := gen_random_bytes(32);
    owner text;
BEGIN
    UPDATE securepush.devices d SET secret_hash = sha256(secret), updated_at = now()
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
$$;

-- Retires active devices not seen for `stale_after` (at most `batch` per call); returns how many.
CREATE FUNCTION securepush.retire_stale_devices(stale_after interval, batch integer DEFAULT 1000) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    stale record;
    retired integer := 0;
BEGIN
    FOR stale IN
        SELECT d.id, d.user_id FROM securepush.devices d
        WHERE d.active AND coalesce(d.last_seen_at, d.updated_at) < now() - stale_after
        ORDER BY coalesce(d.last_seen_at, d.updated_at)
        LIMIT batch
        FOR UPDATE SKIP LOCKED
    LOOP
        PERFORM securepush.deactivate_device(stale.id, 'retired: not seen for ' || stale_after::text);
        PERFORM securepush.audit('device_retired', stale.user_id, stale.id, 'not seen for ' || stale_after::text);
        retired := retired + 1;
    END LOOP;
    RETURN retired;
END
$$;

-- Failed authentication attempts, per key ('addr:<client address>' or 'device:<device id>'), shared by
-- every API process. After `free` failures each further failure blocks the key for a doubling time.
CREATE TABLE securepush.auth_failures (
    key           text PRIMARY KEY CONSTRAINT auth_failures_key_short CHECK (length(key) <= 100),
    failures      integer NOT NULL DEFAULT 0,
    first_at      timestamptz NOT NULL DEFAULT now(),
    last_at       timestamptz NOT NULL DEFAULT now(),
    blocked_until timestamptz
);

CREATE INDEX auth_failures_last_idx ON securepush.auth_failures (last_at);

-- How long each key is still blocked (0 when not): one round trip before authenticating.
CREATE FUNCTION securepush.auth_blocked_for(keys text[]) RETURNS double precision
LANGUAGE sql STABLE AS $$
    SELECT coalesce(max(extract(epoch FROM blocked_until - now())), 0)::double precision
    FROM securepush.auth_failures
    WHERE key = ANY(keys) AND blocked_until > now()
$$;

-- Records one failure for each key; returns the longest block now in force (seconds, 0 when none).
-- Failures older than `window_` start the count again.
CREATE FUNCTION securepush.auth_failed(keys text[], free integer, base interval, max_block interval, window_ interval)
RETURNS double precision
LANGUAGE plpgsql AS $$
DECLARE
    longest double precision := 0;
    row_ record;
BEGIN
    FOR row_ IN
        INSERT INTO securepush.auth_failures AS f (key, failures)
        SELECT k, 1 FROM unnest(keys) k
        ON CONFLICT (key) DO UPDATE
            SET failures = CASE WHEN f.last_at < now() - window_ THEN 1 ELSE f.failures + 1 END,
                first_at = CASE WHEN f.last_at < now() - window_ THEN now() ELSE f.first_at END,
                last_at = now()
        RETURNING f.key, f.failures
    LOOP
        IF row_.failures > free THEN
            UPDATE securepush.auth_failures
            SET blocked_until = now() + least(max_block, base * power(2, least(row_.failures - free - 1, 30)))
            WHERE key = row_.key;
            longest := greatest(longest, extract(epoch FROM least(max_block, base * power(2, least(row_.failures - free - 1, 30)))));
        END IF;
    END LOOP;
    RETURN longest;
END
$$;

-- Deletes throttle rows idle for longer than `idle`.
CREATE FUNCTION securepush.prune_auth_failures(idle interval) RETURNS integer
LANGUAGE sql AS $$
    WITH gone AS (DELETE FROM securepush.auth_failures WHERE last_at < now() - idle AND (blocked_until IS NULL OR blocked_until < now()) RETURNING 1)
    SELECT count(*)::integer FROM gone
$$;
