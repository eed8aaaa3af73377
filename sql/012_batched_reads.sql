-- Reads of many devices in one statement. During a broadcast every phone fetches its notification at
-- once, and each fetch cost one function call, one read-sync trigger firing and one commit of its own;
-- the API now gathers the fetches that arrive while earlier ones are in the database and sends them as one
-- call of this function: one statement, one trigger firing, one commit (the WAL flush) for all of them.
--
-- Each request keeps the rules of `securepush.device_fetch` (007, with 008's credential check): a request
-- whose credential is wrong, unknown or of an inactive device gets a session row with no user and how
-- long its throttle keys are blocked, and reads nothing; another user's notification is reported exactly
-- like an unknown id and is not touched; the first read is recorded once (`read_at`, `read_by_device`) and
-- each device's first fetch once. Requests are numbered from 1 in the order of `p_devices`; `p_req[i]`
-- tells which request asked for `p_ids[i]`, and `p_key_req[i]` whose throttle key `p_keys[i]` is. The
-- result is, per request, its session row (`id` NULL) and one row per requested id, in no order (the
-- caller puts them back in the order asked; the database is where a broadcast's time goes).
--
-- Locks: notifications are locked by one index walk over all the ids (ascending, whatever request asked),
-- so two batches that share ids cannot deadlock; `last_seen_at` (kept to the minute) skips a device row
-- another transaction holds instead of waiting for it. Plans do not depend on statistics (as in 010).
CREATE FUNCTION securepush.device_fetch_batch(
    p_devices uuid[], p_hashes bytea[], p_keys text[], p_key_req integer[], p_req integer[], p_ids uuid[]
) RETURNS TABLE (
    req integer, user_id text, blocked_for double precision, id uuid, owned boolean, live boolean, payload text,
    created_at timestamptz, read_at timestamptz
)
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
          AND EXISTS (SELECT 1 FROM wanted w WHERE w.id = n.id AND w.user_id = n.user_id)
        RETURNING n.id, n.user_id, n.payload::text AS payload, n.created_at, n.read_at
    ),
    fetched AS (
        INSERT INTO securepush.fetches (notification_id, device_id)
        SELECT DISTINCT m.id, w.device FROM marked m JOIN wanted w ON w.id = m.id AND w.user_id = m.user_id
        ON CONFLICT (notification_id, device_id) DO NOTHING
    ),
    dead AS (
        SELECT n.id, n.user_id FROM securepush.notifications n
        WHERE n.id = ANY(p_ids) AND NOT (n.expires_at > now() AND n.purged_at IS NULL)
    )
    SELECT q.req, g.user_id,
           CASE WHEN g.user_id IS NULL
                THEN securepush.auth_blocked_for(ARRAY(SELECT k.key FROM unnest(p_keys, p_key_req) AS k(key, req) WHERE k.req = q.req))
                ELSE 0::double precision END,
           NULL::uuid, NULL::boolean, NULL::boolean, NULL::text, NULL::timestamptz, NULL::timestamptz
    FROM requests q LEFT JOIN granted g ON g.req = q.req
    UNION ALL
    SELECT w.req, NULL::text, NULL::double precision, w.id, m.id IS NOT NULL OR d.id IS NOT NULL, m.id IS NOT NULL,
           m.payload, m.created_at, m.read_at
    FROM wanted w
    LEFT JOIN marked m ON m.id = w.id AND m.user_id = w.user_id
    LEFT JOIN dead d ON d.id = w.id AND d.user_id = w.user_id;
END
$$;
