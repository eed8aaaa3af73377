-- securepush.device_fetch_requests: routine file (docs/sql.md).
-- Many devices' fetches in one statement (ReadBatcher). One row per requested id, or one row for a request
-- with no granted ids, each carrying its request's session (user_id, or blocked_for when refused).
CREATE OR REPLACE FUNCTION securepush.device_fetch_requests(p_devices uuid[], p_hashes bytea[], p_keys text[], p_key_req integer[], p_req integer[], p_ids uuid[])
 RETURNS TABLE(req integer, user_id text, blocked_for double precision, id uuid, owned boolean, live boolean, payload text, created_at timestamp with time zone, read_at timestamp with time zone, category text, preview text, traceparent text)
 LANGUAGE plpgsql SET enable_seqscan TO 'off' SET enable_bitmapscan TO 'off' SET enable_hashjoin TO 'off' SET enable_mergejoin TO 'off' SET jit TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH requests AS (
        SELECT r.req::integer AS req, r.device, r.hash
        FROM unnest(p_devices, p_hashes) WITH ORDINALITY AS r(device, hash, req)
    ),
    granted AS (
        SELECT q.req, q.device, d.user_id, d.platform, d.last_seen_at
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
        SELECT w.req, w.id, w.ord, g.user_id, g.device, g.platform
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
                  n.preview::text AS preview, n.traceparent
    ),
    fetched AS (
        INSERT INTO securepush.fetches (notification_id, device_id, platform)
        SELECT DISTINCT m.id, w.device, w.platform FROM marked m JOIN wanted w ON w.id = m.id AND w.user_id = m.user_id
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
           w.id, m.id IS NOT NULL OR d.id IS NOT NULL, m.id IS NOT NULL, m.payload, m.created_at, m.read_at, m.category, m.preview, m.traceparent
    FROM requests q
    LEFT JOIN granted g ON g.req = q.req
    LEFT JOIN wanted w ON w.req = q.req
    LEFT JOIN marked m ON m.id = w.id AND m.user_id = w.user_id
    LEFT JOIN dead d ON d.id = w.id AND d.user_id = w.user_id;
END
$function$;
REVOKE ALL ON FUNCTION securepush.device_fetch_requests(p_devices uuid[], p_hashes bytea[], p_keys text[], p_key_req integer[], p_req integer[], p_ids uuid[]) FROM PUBLIC;
