-- Device reads in one round trip (and a payload purge that cannot go quadratic, at the end): each read API request (read one, batch fetch, list, list with payloads)
-- is one call of one function that checks the device credential, the failed-authentication throttle and
-- records that the device was seen, then does the read, so a request costs one statement and its plans
-- are cached per connection.
--
-- The credential check compares SHA-256 digests: the caller hashes the presented secret and the stored
-- value is the hash of the issued secret. A comparison of digests that stops at the first differing byte
-- tells an attacker nothing about the secret (they cannot choose digest bytes), and an unknown device id
-- is compared against a decoy digest, so both paths do the same work.
--
-- `device_fetch` and `device_list` return the session (`device_check`) first: one row with `user_id` (NULL when the credential is
-- refused: unknown, wrong, inactive, or throttled) and `blocked_for` (seconds any throttle key is still
-- blocked, 0 when none); the other columns of that row are NULL. The rows after it are the read's results,
-- with `user_id` and `blocked_for` NULL.

-- The credential check: the device's user when the digest matches an active device and no throttle key
-- is blocked (else NULL), how long any throttle key is still blocked (0 when none); records that the
-- device was seen (at most once a minute, to keep reads cheap). The routes that do more than read call
-- it on its own.
CREATE FUNCTION securepush.device_check(
    p_device uuid, p_secret_hash bytea, p_throttle_keys text[], OUT user_id text, OUT blocked_for double precision
)
LANGUAGE plpgsql AS $$
DECLARE
    owner text;
    stored bytea;
    is_active boolean;
    seen timestamptz;
BEGIN
    blocked_for := securepush.auth_blocked_for(p_throttle_keys);
    SELECT d.user_id, d.secret_hash, d.active, d.last_seen_at INTO owner, stored, is_active, seen
    FROM securepush.devices d WHERE d.id = p_device;
    IF coalesce(stored, '\x7e644e95075aaf8040509175894c5cdb329f0ed60360c04cfb69b4825304b460'::bytea) IS DISTINCT FROM p_secret_hash
       OR stored IS NULL OR is_active IS NOT TRUE OR blocked_for > 0 THEN
        RETURN;
    END IF;
    IF seen IS NULL OR seen < now() - interval '1 minute' THEN
        UPDATE securepush.devices d SET last_seen_at = now() WHERE d.id = p_device;
    END IF;
    user_id := owner;
END
$$;

-- Fetches the user's live notifications among `p_ids` for one device, in one statement: each is marked
-- read (`read_at`, `read_by_device`) unless it already was, and this device's first fetch is recorded.
-- One write per row: a concurrent first read by another device waits for the row and then returns that
-- read's `read_at` (the update keeps the first values). Expired or purged ones are `owned` but not
-- `live`; another user's notification is not touched and is reported exactly like an unknown id
-- (`owned` false). Rows come back in the order of `p_ids`.
CREATE FUNCTION securepush.fetch_for_device(p_user text, p_device uuid, p_ids uuid[])
RETURNS TABLE (id uuid, owned boolean, live boolean, payload text, created_at timestamptz, read_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH marked AS (
        UPDATE securepush.notifications n
        SET read_at = coalesce(n.read_at, now()), read_by_device = coalesce(n.read_by_device, p_device)
        WHERE n.id = ANY(p_ids) AND n.user_id = p_user AND n.expires_at > now() AND n.purged_at IS NULL
        RETURNING n.id, n.payload::text AS payload, n.created_at, n.read_at
    ),
    fetched AS (
        INSERT INTO securepush.fetches (notification_id, device_id)
        SELECT m.id, p_device FROM marked m
        ON CONFLICT (notification_id, device_id) DO NOTHING
    ),
    dead AS (
        SELECT n.id FROM securepush.notifications n
        WHERE n.id = ANY(p_ids) AND n.user_id = p_user AND NOT (n.expires_at > now() AND n.purged_at IS NULL)
    )
    SELECT w.id, m.id IS NOT NULL OR d.id IS NOT NULL, m.id IS NOT NULL, m.payload, m.created_at, m.read_at
    FROM unnest(p_ids) WITH ORDINALITY AS w(id, ord)
    LEFT JOIN marked m ON m.id = w.id
    LEFT JOIN dead d ON d.id = w.id
    ORDER BY w.ord;
END
$$;

-- `GET /v1/notifications/{id}` and `POST /v1/notifications/fetch`: the session row, then one row per
-- requested id in the order given (`securepush.fetch_for_device`).
CREATE FUNCTION securepush.device_fetch(p_device uuid, p_secret_hash bytea, p_throttle_keys text[], p_ids uuid[])
RETURNS TABLE (user_id text, blocked_for double precision, id uuid, owned boolean, live boolean, payload text,
               created_at timestamptz, read_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    auth record;
BEGIN
    SELECT c.user_id, c.blocked_for INTO auth FROM securepush.device_check(p_device, p_secret_hash, p_throttle_keys) c;
    RETURN QUERY SELECT auth.user_id, auth.blocked_for, NULL::uuid, NULL::boolean, NULL::boolean, NULL::text,
                        NULL::timestamptz, NULL::timestamptz;
    IF auth.user_id IS NULL OR coalesce(cardinality(p_ids), 0) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT NULL::text, NULL::double precision, f.id, f.owned, f.live, f.payload, f.created_at, f.read_at
                 FROM securepush.fetch_for_device(auth.user_id, p_device, p_ids) f;
END
$$;

-- `GET /v1/notifications`: the session row, then the user's unexpired notifications (unread only when
-- asked), newest first, after the cursor (`p_after_id` NULL: from the newest), at most `p_limit + 1`
-- rows so the caller knows whether a next page exists. With `p_with_payloads`, the first `p_limit` are
-- fetched by this device and marked read (`securepush.fetch_for_device`) and carry their payloads; the
-- extra row has none; an item purged while the page was read is left out.
CREATE FUNCTION securepush.device_list(
    p_device uuid, p_secret_hash bytea, p_throttle_keys text[], p_unread_only boolean, p_limit integer,
    p_after_micros bigint, p_after_id uuid, p_with_payloads boolean
)
RETURNS TABLE (user_id text, blocked_for double precision, id uuid, created_at timestamptz, read_at timestamptz,
               micros bigint, payload text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    auth record;
BEGIN
    SELECT c.user_id, c.blocked_for INTO auth FROM securepush.device_check(p_device, p_secret_hash, p_throttle_keys) c;
    RETURN QUERY SELECT auth.user_id, auth.blocked_for, NULL::uuid, NULL::timestamptz, NULL::timestamptz, NULL::bigint,
                        NULL::text;
    IF auth.user_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH page AS (
        SELECT n.id, n.created_at, n.read_at, (extract(epoch FROM n.created_at) * 1000000)::bigint AS micros,
               row_number() OVER (ORDER BY n.created_at DESC, n.id DESC) AS position
        FROM (
            SELECT n.id, n.created_at, n.read_at
            FROM securepush.notifications n
            WHERE n.user_id = auth.user_id AND n.expires_at > now() AND n.purged_at IS NULL
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
           CASE WHEN f.live THEN f.payload END
    FROM page p
    LEFT JOIN fetched f ON f.id = p.id
    WHERE NOT p_with_payloads OR p.position > p_limit OR f.live
    ORDER BY p.position;
END
$$;

-- The payload purge picks its batch first and then updates those rows by primary key. Its first form,
-- `id IN (SELECT ... LIMIT batch FOR UPDATE SKIP LOCKED)`, let the planner (statistics stale after a
-- bulk insert) rescan the subquery for every row: a purge ran for minutes at full CPU.
CREATE OR REPLACE FUNCTION securepush.purge_payloads(after_read interval DEFAULT NULL, batch integer DEFAULT 10000) RETURNS integer
LANGUAGE sql AS $$
    WITH purged AS (
        UPDATE securepush.notifications n SET payload = NULL, purged_at = now()
        WHERE n.id = ANY (ARRAY(
            SELECT id FROM securepush.notifications
            WHERE purged_at IS NULL
              AND (expires_at <= now() OR (after_read IS NOT NULL AND read_at <= now() - after_read))
            LIMIT batch
            FOR UPDATE SKIP LOCKED
        ))
        RETURNING 1
    )
    SELECT count(*)::integer FROM purged
$$;
