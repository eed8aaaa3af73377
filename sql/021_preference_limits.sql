-- Limits on what one device or user can pile up (issue 32, item 6).
--
-- 1. Muted categories per user: at most `max_muted_categories` (100 unless the setting says otherwise). One
--    user created 3,924 mutes in 60 s and `GET /v1/categories` returned them all; a mute over the cap is
--    refused (22023, `400 invalid_parameter` in the API) until one is unmuted. Unmuting is never limited.
-- 2. Sealing-key changes per device: at most `max_sealing_key_changes_per_hour` (20) set or cleared keys in any
--    hour (each adds an audit row kept for the audit retention); one more is `SPR01` with the seconds to wait
--    in DETAIL (`429` with Retry-After in the API), as registrations are. Counted through a partial index.
--
-- Both keep 018's `jit = off` (a CREATE OR REPLACE resets a function's settings to those it states).

INSERT INTO securepush.settings (key, value) VALUES ('max_muted_categories', '100'), ('max_sealing_key_changes_per_hour', '20')
ON CONFLICT (key) DO NOTHING;

CREATE INDEX audit_log_sealing_idx ON securepush.audit_log (device_id, at)
WHERE event IN ('sealing_key_set', 'sealing_key_cleared');

CREATE OR REPLACE FUNCTION securepush.set_category_muted(user_id text, category text, muted boolean) RETURNS integer
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_variable
DECLARE
    cancelled integer := 0;
    cap integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_muted_categories'), 100);
BEGIN
    IF category IS NULL OR category !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' THEN
        RAISE EXCEPTION 'a category is 1 to 64 letters, digits, . _ - (starting with a letter or digit)' USING ERRCODE = '22023';
    END IF;
    IF NOT muted THEN
        DELETE FROM securepush.category_mutes m WHERE m.user_id = user_id AND m.category = category;
        RETURN 0;
    END IF;
    -- One change at a time per user, so concurrent mutes cannot pass the cap together.
    PERFORM pg_advisory_xact_lock(hashtextextended('securepush.category_mutes:' || user_id, 0));
    IF NOT EXISTS (SELECT 1 FROM securepush.category_mutes m WHERE m.user_id = user_id AND m.category = category)
       AND (SELECT count(*) FROM securepush.category_mutes m WHERE m.user_id = user_id) >= cap THEN
        RAISE EXCEPTION 'a user mutes at most % categories: unmute one first', cap USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.category_mutes (user_id, category) VALUES (user_id, category) ON CONFLICT DO NOTHING;
    WITH gone AS (
        DELETE FROM securepush.deliveries dl
        USING securepush.notifications n
        WHERE n.user_id = user_id AND n.category = category AND dl.notification_id = n.id
          AND dl.kind = 'notify' AND dl.state IN ('scheduled', 'pending')
        RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at
    ),
    logged AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error, created_at, kind)
        SELECT g.id, g.notification_id, g.device_id, g.platform, 'cancelled', g.attempts, 'category muted', g.created_at, 'notify'
        FROM gone g
        RETURNING 1
    )
    SELECT count(*) INTO cancelled FROM logged;
    RETURN cancelled;
END
$$;

CREATE OR REPLACE FUNCTION securepush.set_sealing_key(target_device uuid, seal_public bytea, seal_auth bytea) RETURNS boolean
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_variable
DECLARE
    me record;
    rate integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_sealing_key_changes_per_hour'), 20);
    recent integer;
    oldest timestamptz;
BEGIN
    IF (seal_public IS NULL) <> (seal_auth IS NULL)
       OR (seal_public IS NOT NULL AND (octet_length(seal_public) <> 65 OR get_byte(seal_public, 0) <> 4 OR octet_length(seal_auth) <> 16)) THEN
        RAISE EXCEPTION 'a sealing key is a 65-byte uncompressed P-256 point and a 16-byte auth secret' USING ERRCODE = '22023';
    END IF;
    SELECT d.id, d.user_id, d.platform INTO me FROM securepush.devices d WHERE d.id = target_device AND d.active FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF me.platform = 'webpush' AND seal_public IS NOT NULL THEN
        RAISE EXCEPTION 'Web Push devices seal with their subscription keys (p256dh, auth)' USING ERRCODE = '22023';
    END IF;
    -- The device row is locked: concurrent changes of one device are counted one after the other.
    SELECT count(*), min(a.at) INTO recent, oldest FROM securepush.audit_log a
    WHERE a.event IN ('sealing_key_set', 'sealing_key_cleared') AND a.device_id = me.id AND a.at > now() - interval '1 hour';
    IF rate > 0 AND recent >= rate THEN
        RAISE EXCEPTION 'too many sealing key changes for this device'
            USING ERRCODE = 'SPR01', DETAIL = greatest(1, ceil(extract(epoch FROM oldest + interval '1 hour' - now())))::integer::text;
    END IF;
    UPDATE securepush.devices d SET seal_public = set_sealing_key.seal_public, seal_auth = set_sealing_key.seal_auth, updated_at = now()
    WHERE d.id = me.id;
    PERFORM securepush.audit(CASE WHEN seal_public IS NULL THEN 'sealing_key_cleared' ELSE 'sealing_key_set' END, me.user_id, me.id,
                             me.platform);
    RETURN true;
END
$$;
