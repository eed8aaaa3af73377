-- securepush.device_fetch_requests: routine file (docs/sql.md).
-- Many devices' fetches in one statement (ReadBatcher). One row per requested id, or one row for a request
-- with no granted ids, each carrying its request's session (user_id, or blocked_for when refused).
-- A producer's transaction that holds a notification (a cancel left open, say) must not hold the other
-- devices whose requests the statement carries (issue 47: one held every read for 10 s). With p_skip_held
-- false the statement waits at most 500 ms for a lock (then SQLSTATE 55P03, and nothing was written); the
-- caller then asks again with p_skip_held true, which answers a held notification as it stands, unmarked (a
-- later read marks it), and marks the rest. NULL (0.3.0's call, the signature below) waits as before.
CREATE OR REPLACE FUNCTION securepush.device_fetch_requests(p_devices uuid[], p_hashes bytea[], p_keys text[],
    p_key_req integer[], p_req integer[], p_ids uuid[], p_skip_held boolean)
 RETURNS TABLE(req integer, user_id text, blocked_for double precision, id uuid, owned boolean, live boolean,
    payload text, created_at timestamp with time zone, read_at timestamp with time zone, category text, preview text,
    traceparent text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET jit TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
DECLARE
    patience text := current_setting('lock_timeout');
BEGIN
    IF p_skip_held IS NOT NULL THEN
        PERFORM set_config('lock_timeout', '500ms', true);
    END IF;
    RETURN QUERY
    WITH requests AS (
        SELECT r.req::integer AS req, r.device, r.hash
        FROM unnest(p_devices, p_hashes) WITH ORDINALITY AS r(device, hash, req)
    ),
    -- Every lookup of devices and notifications names its ids as an array (an index condition whatever the join
    -- order): an IN (subquery) left the planner free to walk the whole table once per row of the other side, and
    -- on stale statistics (a devices table refilled since its last ANALYZE) it did: `seen` read every device
    -- once per device, 2 s a statement at 1,000 devices (stop 67: ops/bench's second read run, 6 reads/s).
    granted AS (
        SELECT q.req, q.device, d.user_id, d.platform, d.last_seen_at
        FROM requests q
        JOIN securepush.devices d ON d.id = q.device AND d.secret_hash = q.hash AND d.active
        WHERE d.id = ANY(p_devices)
    ),
    seen AS (
        UPDATE securepush.devices d SET last_seen_at = now()
        WHERE d.id = ANY(ARRAY(SELECT s.id FROM securepush.devices s
                               WHERE s.id = ANY(ARRAY(SELECT g.device FROM granted g
                                                      WHERE g.last_seen_at IS NULL
                                                         OR g.last_seen_at < now() - interval '1 minute'))
                               FOR UPDATE SKIP LOCKED))
    ),
    wanted AS (
        SELECT w.req, w.id, w.ord, g.user_id, g.device, g.platform
        FROM unnest(p_req, p_ids) WITH ORDINALITY AS w(req, id, ord)
        JOIN granted g ON g.req = w.req
    ),
    -- Planned once per session (plan_cache_mode, 054): PL/pgSQL kept a custom plan and planned this statement
    -- again at every call, 0.77 ms against 0.64 ms of execution (ops/wal-budget, track_planning). Its generic plan
    -- must then find the notifications by id whatever it estimates: `(expires_at > now()) IS TRUE` is a filter,
    -- never an index condition (the generic plan walked notifications_expires_idx on stale statistics).
    -- Only with p_skip_held: the live notifications asked for, and those of them no other transaction holds.
    readable AS (
        SELECT n.id, n.user_id, n.payload::text AS payload, n.created_at, n.read_at, n.category,
               n.preview::text AS preview, n.traceparent
        FROM securepush.notifications n
        WHERE p_skip_held AND n.id = ANY(p_ids) AND (n.expires_at > now()) IS TRUE AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
          AND EXISTS (SELECT 1 FROM wanted w WHERE w.id = n.id AND w.user_id = n.user_id)
    ),
    free AS (
        SELECT n.id FROM securepush.notifications n
        WHERE p_skip_held AND n.id = ANY(ARRAY(SELECT r.id FROM readable r))
        FOR NO KEY UPDATE OF n SKIP LOCKED
    ),
    marked AS (
        UPDATE securepush.notifications n
        SET read_at = coalesce(n.read_at, now()),
            read_by_device = coalesce(n.read_by_device,
                                      (SELECT w.device FROM wanted w WHERE w.id = n.id
                                          AND w.user_id = n.user_id LIMIT 1))
        WHERE n.id = ANY(p_ids) AND (n.expires_at > now()) IS TRUE AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
          AND EXISTS (SELECT 1 FROM wanted w WHERE w.id = n.id AND w.user_id = n.user_id)
          AND (p_skip_held IS NOT TRUE OR n.id IN (SELECT f.id FROM free f))
        RETURNING n.id, n.user_id, n.payload::text AS payload, n.created_at, n.read_at, n.category,
                  n.preview::text AS preview, n.traceparent
    ),
    answered AS (
        SELECT * FROM marked
        UNION ALL
        SELECT r.* FROM readable r WHERE p_skip_held AND r.id NOT IN (SELECT f.id FROM free f)
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
                THEN securepush.auth_blocked_for(ARRAY(SELECT k.key FROM unnest(p_keys, p_key_req) AS k(key, req)
                    WHERE k.req = q.req))
                ELSE 0::double precision END,
           w.id, m.id IS NOT NULL OR d.id IS NOT NULL, m.id IS NOT NULL, m.payload, m.created_at, m.read_at,
               m.category, m.preview, m.traceparent
    FROM requests q
    LEFT JOIN granted g ON g.req = q.req
    LEFT JOIN wanted w ON w.req = q.req
    LEFT JOIN answered m ON m.id = w.id AND m.user_id = w.user_id
    LEFT JOIN dead d ON d.id = w.id AND d.user_id = w.user_id;
    PERFORM set_config('lock_timeout', patience, true);
END
$function$;
REVOKE ALL ON FUNCTION securepush.device_fetch_requests(p_devices uuid[], p_hashes bytea[], p_keys text[],
    p_key_req integer[], p_req integer[], p_ids uuid[], p_skip_held boolean) FROM PUBLIC;
-- 0.3.0's call: waits for every lock, as it always did.
CREATE OR REPLACE FUNCTION securepush.device_fetch_requests(p_devices uuid[], p_hashes bytea[], p_keys text[],
    p_key_req integer[], p_req integer[], p_ids uuid[])
 RETURNS TABLE(req integer, user_id text, blocked_for double precision, id uuid, owned boolean, live boolean,
    payload text, created_at timestamp with time zone, read_at timestamp with time zone, category text, preview text,
    traceparent text)
 LANGUAGE sql
AS $function$
    SELECT * FROM securepush.device_fetch_requests(p_devices, p_hashes, p_keys, p_key_req, p_req, p_ids, NULL::boolean)
$function$;
REVOKE ALL ON FUNCTION securepush.device_fetch_requests(p_devices uuid[], p_hashes bytea[], p_keys text[],
    p_key_req integer[], p_req integer[], p_ids uuid[]) FROM PUBLIC;
