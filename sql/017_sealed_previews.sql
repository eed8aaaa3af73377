-- Sealed previews (docs/security.md): a short preview the producer approves per notification, pushed only
-- sealed to the device's own key (RFC 8291) and only with SECUREPUSH_SEALED_PREVIEWS=on. The payload still
-- never leaves the database.

-- The preview: a small JSON object (the kits show its title and body). Erased with the payload.
ALTER TABLE securepush.notifications ADD COLUMN preview jsonb;
ALTER TABLE securepush.notifications ADD CONSTRAINT notifications_preview_object CHECK (jsonb_typeof(preview) = 'object');
ALTER TABLE securepush.notifications ADD CONSTRAINT notifications_preview_max_1kib CHECK (octet_length(preview::text) <= 1024);

CREATE FUNCTION securepush.erase_preview() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.preview := NULL;
    RETURN NEW;
END
$$;

-- Every path that drops a payload (purge after reading, cancel, expiry) drops the preview in the same row update.
CREATE TRIGGER notifications_erase_preview BEFORE UPDATE OF payload ON securepush.notifications
FOR EACH ROW WHEN (NEW.payload IS NULL AND NEW.preview IS NOT NULL) EXECUTE FUNCTION securepush.erase_preview();

-- The device's sealing key: an RFC 8291 recipient (65-byte uncompressed P-256 point, 16-byte auth secret). The
-- private key never leaves the device. Web Push devices seal with their subscription's p256dh and auth.
ALTER TABLE securepush.devices ADD COLUMN seal_public bytea;
ALTER TABLE securepush.devices ADD COLUMN seal_auth bytea;
ALTER TABLE securepush.devices ADD CONSTRAINT devices_sealing_key_valid CHECK (
    (seal_public IS NULL) = (seal_auth IS NULL)
    AND (seal_public IS NULL OR (octet_length(seal_public) = 65 AND get_byte(seal_public, 0) = 4 AND octet_length(seal_auth) = 16)));
ALTER TABLE securepush.devices ADD CONSTRAINT devices_sealing_key_not_webpush CHECK (seal_public IS NULL OR platform <> 'webpush');

ALTER TABLE securepush.audit_log DROP CONSTRAINT audit_log_event_valid;
ALTER TABLE securepush.audit_log ADD CONSTRAINT audit_log_event_valid CHECK (event IN (
    'device_registered', 'device_rotated', 'device_revoked', 'device_retired', 'throttled', 'token_invalid',
    'device_rebound', 'registration_limited', 'device_deleted', 'device_token_updated', 'sealing_key_set',
    'sealing_key_cleared'));

-- Sets (or, with NULLs, clears) an active device's sealing key. False when the device is not active.
CREATE FUNCTION securepush.set_sealing_key(target_device uuid, seal_public bytea, seal_auth bytea)
RETURNS boolean
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    me record;
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
    UPDATE securepush.devices d SET seal_public = set_sealing_key.seal_public, seal_auth = set_sealing_key.seal_auth, updated_at = now()
    WHERE d.id = me.id;
    PERFORM securepush.audit(CASE WHEN seal_public IS NULL THEN 'sealing_key_cleared' ELSE 'sealing_key_set' END, me.user_id, me.id,
                             me.platform);
    RETURN true;
END
$$;

-- Keys rotate with the device secret: a new secret replaces the sealing key with the one given (NULLs: none,
-- so the device gets id-only pushes until it sets one). The one-argument form clears it.
CREATE FUNCTION securepush.rotate_device_secret(target_device uuid, seal_public bytea, seal_auth bytea)
RETURNS TABLE(device_id uuid, device_secret text, sealing boolean)
LANGUAGE plpgsql AS $$
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
$$;

CREATE OR REPLACE FUNCTION securepush.rotate_device_secret(target_device uuid)
RETURNS TABLE(device_id uuid, device_secret text)
LANGUAGE plpgsql AS $$
DECLARE
    secret bytea := gen_random_bytes(32);
    owner text;
BEGIN
    UPDATE securepush.devices d SET secret_hash = sha256(secret), seal_public = NULL, seal_auth = NULL, updated_at = now()
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

-- enqueue takes the preview.
DROP FUNCTION securepush.enqueue(text, jsonb, interval, text, integer, timestamptz, text, text, text);
CREATE FUNCTION securepush.enqueue(
    user_id text, payload jsonb, ttl interval DEFAULT NULL, idempotency_key text DEFAULT NULL, priority integer DEFAULT 0,
    deliver_at timestamptz DEFAULT NULL, urgency text DEFAULT 'active', collapse_key text DEFAULT NULL,
    category text DEFAULT NULL, preview jsonb DEFAULT NULL
) RETURNS uuid
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    new_id uuid;
BEGIN
    IF user_id IS NULL OR payload IS NULL THEN
        RAISE EXCEPTION 'securepush.enqueue: user_id and payload are required' USING ERRCODE = '22004';
    END IF;
    IF ttl IS NOT NULL AND ttl <= interval '0' THEN
        RAISE EXCEPTION 'securepush.enqueue: ttl must be positive' USING ERRCODE = '22023';
    END IF;
    IF urgency IS NULL OR urgency NOT IN ('passive', 'active', 'time_sensitive', 'critical') THEN
        RAISE EXCEPTION 'securepush.enqueue: urgency must be passive, active, time_sensitive or critical' USING ERRCODE = '22023';
    END IF;
    IF preview IS NOT NULL AND (jsonb_typeof(preview) <> 'object' OR octet_length(preview::text) > 1024) THEN
        RAISE EXCEPTION 'securepush.enqueue: preview must be a JSON object of at most 1024 bytes' USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.notifications AS n
        (user_id, payload, priority, idempotency_key, expires_at, deliver_at, urgency, collapse_key, category, preview)
    VALUES (user_id, payload, priority, idempotency_key,
            coalesce(deliver_at, now()) + coalesce(ttl, securepush.default_ttl()), deliver_at, urgency, collapse_key, category,
            preview)
    ON CONFLICT ON CONSTRAINT notifications_idempotency_unique DO NOTHING
    RETURNING n.id INTO new_id;
    IF new_id IS NULL THEN
        SELECT n.id INTO new_id FROM securepush.notifications n
        WHERE n.user_id = enqueue.user_id AND n.idempotency_key = enqueue.idempotency_key;
    END IF;
    RETURN new_id;
END
$$;

-- Claims return the preview and the device's sealing key when the caller seals (p_sealed). Its default keeps
-- the previous release's dispatchers (seven arguments) claiming during a rolling upgrade.
DROP FUNCTION securepush.claim_deliveries(integer, text[], bigint, uuid, uuid, boolean, integer);
CREATE FUNCTION securepush.claim_deliveries(p_limit integer, p_platforms text[], p_lease_ms bigint, p_token uuid, p_worker uuid,
                                            p_badge boolean, p_badge_limit integer,
                                            p_sealed boolean DEFAULT false)
RETURNS TABLE(id uuid, notification_id uuid, device_id uuid, platform text, token text, options text, active boolean,
              expires_at timestamptz, priority smallint, attempts integer, unread bigint, clear_ids uuid[], urgency text,
              collapse_id text, preview text, seal_public bytea, seal_auth bytea)
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
#variable_conflict use_column
DECLARE
    claimed_rows integer;
BEGIN
    RETURN QUERY
    WITH c AS MATERIALIZED (
        SELECT d.id FROM securepush.deliveries d
        WHERE d.state = 'pending' AND d.run_at <= now() AND d.platform = ANY(p_platforms)
        ORDER BY d.priority DESC, d.run_at, d.id
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    ),
    claimed AS (
        UPDATE securepush.deliveries d
        SET state = 'claimed', attempts = d.attempts + 1, lease_token = p_token, claimed_at = now(),
            lease_expires_at = now() + p_lease_ms * interval '1 millisecond', claimed_by = p_worker
        FROM c, securepush.devices dev
        WHERE d.id = c.id AND dev.id = d.device_id
        RETURNING d.id, d.notification_id, d.device_id, d.platform, dev.token, dev.options::text AS options, dev.active,
                  d.expires_at, d.priority, d.attempts, dev.user_id, d.clear_ids, d.urgency, d.collapse_id,
                  dev.seal_public, dev.seal_auth
    ),
    badges AS MATERIALIZED (
        SELECT jsonb_object_agg(u.user_id, securepush.unread_badge(u.user_id, p_badge_limit)) AS counts
        FROM (SELECT DISTINCT claimed.user_id FROM claimed) u
        WHERE p_badge
    )
    SELECT claimed.id, claimed.notification_id, claimed.device_id, claimed.platform, claimed.token, claimed.options,
           claimed.active, claimed.expires_at, claimed.priority, claimed.attempts,
           ((SELECT b.counts FROM badges b) ->> claimed.user_id)::bigint,
           claimed.clear_ids, claimed.urgency, claimed.collapse_id,
           -- Only with the switch on (SECUREPUSH_SEALED_PREVIEWS): off, the subquery never runs and no key leaves.
           CASE WHEN p_sealed AND claimed.clear_ids IS NULL
                THEN (SELECT n.preview::text FROM securepush.notifications n
                      WHERE n.id = claimed.notification_id AND n.payload IS NOT NULL) END,
           CASE WHEN p_sealed THEN claimed.seal_public END, CASE WHEN p_sealed THEN claimed.seal_auth END
    FROM claimed;
    GET DIAGNOSTICS claimed_rows = ROW_COUNT;
    IF claimed_rows > 0 THEN
        UPDATE securepush.dispatchers d SET awaiting_wakeup = false WHERE d.id = p_worker AND d.awaiting_wakeup;
    END IF;
END
$$;

-- The read functions return the preview.
DROP FUNCTION securepush.device_fetch(uuid, bytea, text[], uuid[]);
DROP FUNCTION securepush.device_list(uuid, bytea, text[], boolean, integer, bigint, uuid, boolean);
DROP FUNCTION securepush.fetch_for_device(text, uuid, uuid[]);
DROP FUNCTION securepush.device_fetch_batch(uuid[], bytea[], text[], integer[], integer[], uuid[]);

CREATE FUNCTION securepush.fetch_for_device(p_user text, p_device uuid, p_ids uuid[])
RETURNS TABLE(id uuid, owned boolean, live boolean, payload text, created_at timestamptz, read_at timestamptz, category text,
              preview text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH marked AS (
        UPDATE securepush.notifications n
        SET read_at = coalesce(n.read_at, now()), read_by_device = coalesce(n.read_by_device, p_device)
        WHERE n.id = ANY(p_ids) AND n.user_id = p_user AND n.expires_at > now() AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
        RETURNING n.id, n.payload::text AS payload, n.created_at, n.read_at, n.category, n.preview::text AS preview
    ),
    fetched AS (
        INSERT INTO securepush.fetches (notification_id, device_id)
        SELECT m.id, p_device FROM marked m
        ON CONFLICT (notification_id, device_id) DO NOTHING
    ),
    dead AS (
        SELECT n.id FROM securepush.notifications n
        WHERE n.id = ANY(p_ids) AND n.user_id = p_user AND NOT (n.expires_at > now() AND n.purged_at IS NULL)
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
    )
    SELECT w.id, m.id IS NOT NULL OR d.id IS NOT NULL, m.id IS NOT NULL, m.payload, m.created_at, m.read_at, m.category, m.preview
    FROM unnest(p_ids) WITH ORDINALITY AS w(id, ord)
    LEFT JOIN marked m ON m.id = w.id
    LEFT JOIN dead d ON d.id = w.id
    ORDER BY w.ord;
END
$$;

CREATE FUNCTION securepush.device_fetch(p_device uuid, p_secret_hash bytea, p_throttle_keys text[], p_ids uuid[])
RETURNS TABLE(user_id text, blocked_for double precision, id uuid, owned boolean, live boolean, payload text,
              created_at timestamptz, read_at timestamptz, category text, preview text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    auth record;
BEGIN
    SELECT c.user_id, c.blocked_for INTO auth FROM securepush.device_check(p_device, p_secret_hash, p_throttle_keys) c;
    RETURN QUERY SELECT auth.user_id, auth.blocked_for, NULL::uuid, NULL::boolean, NULL::boolean, NULL::text,
                        NULL::timestamptz, NULL::timestamptz, NULL::text, NULL::text;
    IF auth.user_id IS NULL OR coalesce(cardinality(p_ids), 0) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT NULL::text, NULL::double precision, f.id, f.owned, f.live, f.payload, f.created_at, f.read_at, f.category,
                        f.preview
                 FROM securepush.fetch_for_device(auth.user_id, p_device, p_ids) f;
END
$$;

CREATE FUNCTION securepush.device_fetch_batch(p_devices uuid[], p_hashes bytea[], p_keys text[], p_key_req integer[],
                                              p_req integer[], p_ids uuid[])
RETURNS TABLE(req integer, user_id text, blocked_for double precision, id uuid, owned boolean, live boolean, payload text,
              created_at timestamptz, read_at timestamptz, category text, preview text)
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH requests AS (
        SELECT r.req::integer AS req, r.device, r.hash
        FROM unnest(p_devices, p_hashes) WITH ORDINALITY AS r(device, hash, req)
    ),
    granted AS (
        SELECT q.req, q.device, d.user_id, d.last_seen_at
        FROM requests q
        JOIN securepush.devices d ON d.id = q.device AND d.secret_hash = q.hash AND d.active
    ),
    seen AS (
        UPDATE securepush.devices d SET last_seen_at = now()
        WHERE d.id IN (SELECT s.id FROM securepush.devices s
                       WHERE s.id IN (SELECT g.device FROM granted g
                                      WHERE g.last_seen_at IS NULL OR g.last_seen_at < now() - interval '1 minute')
                       FOR UPDATE SKIP LOCKED)
    ),
    wanted AS (
        SELECT w.req, w.id, w.ord, g.user_id, g.device
        FROM unnest(p_req, p_ids) WITH ORDINALITY AS w(req, id, ord)
        JOIN granted g ON g.req = w.req
    ),
    marked AS (
        UPDATE securepush.notifications n
        SET read_at = coalesce(n.read_at, now()),
            read_by_device = coalesce(n.read_by_device,
                                      (SELECT w.device FROM wanted w WHERE w.id = n.id AND w.user_id = n.user_id LIMIT 1))
        WHERE n.id = ANY(p_ids) AND n.expires_at > now() AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
          AND EXISTS (SELECT 1 FROM wanted w WHERE w.id = n.id AND w.user_id = n.user_id)
        RETURNING n.id, n.user_id, n.payload::text AS payload, n.created_at, n.read_at, n.category,
                  n.preview::text AS preview
    ),
    fetched AS (
        INSERT INTO securepush.fetches (notification_id, device_id)
        SELECT DISTINCT m.id, w.device FROM marked m JOIN wanted w ON w.id = m.id AND w.user_id = m.user_id
        ON CONFLICT (notification_id, device_id) DO NOTHING
    ),
    dead AS (
        SELECT n.id, n.user_id FROM securepush.notifications n
        WHERE n.id = ANY(p_ids) AND NOT (n.expires_at > now() AND n.purged_at IS NULL)
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
    )
    SELECT q.req, g.user_id,
           CASE WHEN g.user_id IS NULL
                THEN securepush.auth_blocked_for(ARRAY(SELECT k.key FROM unnest(p_keys, p_key_req) AS k(key, req) WHERE k.req = q.req))
                ELSE 0::double precision END,
           NULL::uuid, NULL::boolean, NULL::boolean, NULL::text, NULL::timestamptz, NULL::timestamptz, NULL::text, NULL::text
    FROM requests q LEFT JOIN granted g ON g.req = q.req
    UNION ALL
    SELECT w.req, NULL::text, NULL::double precision, w.id, m.id IS NOT NULL OR d.id IS NOT NULL, m.id IS NOT NULL,
           m.payload, m.created_at, m.read_at, m.category, m.preview
    FROM wanted w
    LEFT JOIN marked m ON m.id = w.id AND m.user_id = w.user_id
    LEFT JOIN dead d ON d.id = w.id AND d.user_id = w.user_id;
END
$$;

CREATE FUNCTION securepush.device_list(p_device uuid, p_secret_hash bytea, p_throttle_keys text[], p_unread_only boolean,
                                       p_limit integer, p_after_micros bigint, p_after_id uuid, p_with_payloads boolean)
RETURNS TABLE(user_id text, blocked_for double precision, id uuid, created_at timestamptz, read_at timestamptz, micros bigint,
              payload text, category text, preview text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    auth record;
BEGIN
    SELECT c.user_id, c.blocked_for INTO auth FROM securepush.device_check(p_device, p_secret_hash, p_throttle_keys) c;
    RETURN QUERY SELECT auth.user_id, auth.blocked_for, NULL::uuid, NULL::timestamptz, NULL::timestamptz, NULL::bigint,
                        NULL::text, NULL::text, NULL::text;
    IF auth.user_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH page AS (
        SELECT n.id, n.created_at, n.read_at, n.category, n.preview, (extract(epoch FROM n.created_at) * 1000000)::bigint AS micros,
               row_number() OVER (ORDER BY n.created_at DESC, n.id DESC) AS position
        FROM (
            SELECT n.id, n.created_at, n.read_at, n.category, n.preview::text AS preview
            FROM securepush.notifications n
            WHERE n.user_id = auth.user_id AND n.expires_at > now() AND n.purged_at IS NULL
              AND (n.deliver_at IS NULL OR n.deliver_at <= now())
              AND (NOT p_unread_only OR n.read_at IS NULL)
              AND (p_after_id IS NULL
                   OR (n.created_at, n.id) < ('epoch'::timestamptz + p_after_micros * interval '1 microsecond', p_after_id))
            ORDER BY n.created_at DESC, n.id DESC
            LIMIT p_limit + 1
        ) n
    ),
    fetched AS (
        SELECT f.id, f.live, f.payload, f.read_at
        FROM securepush.fetch_for_device(auth.user_id, p_device,
                                         CASE WHEN p_with_payloads THEN ARRAY(SELECT p.id FROM page p WHERE p.position <= p_limit)
                                              ELSE '{}'::uuid[] END) f
    )
    SELECT NULL::text, NULL::double precision, p.id, p.created_at, coalesce(f.read_at, p.read_at), p.micros,
           CASE WHEN f.live THEN f.payload END, p.category, p.preview
    FROM page p
    LEFT JOIN fetched f ON f.id = p.id
    WHERE NOT p_with_payloads OR p.position > p_limit OR f.live
    ORDER BY p.position;
END
$$;
