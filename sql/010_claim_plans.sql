-- The dispatcher's claim as one function whose plan does not depend on the planner's statistics.
--
-- A broadcast is a bulk insert that autovacuum has not analysed yet. With no statistics the planner
-- guessed a handful of pending deliveries and claimed by reading every pending row and sorting them all
-- (a bitmap scan and an external sort, per claim: 0.2 s per claim at 50,000 pending), and it rescanned
-- the badge's per-user counts once per claimed row (500 × 250 counts in a claim of 500). Here the claim
-- walks `deliveries_claim_idx` in its order and stops at the limit, and the badge is counted once per
-- user of the batch from `notifications_unread_idx` and looked up per row in a map, whatever the
-- statistics say. The statement is
-- planned for any limit (a function's parameters are not known to the planner, which then guesses a tenth
-- of the table), and on that guess it hashed every delivery to join a claim of 50. So sequential scans,
-- bitmap scans, sorts, hash and merge joins are turned off for this function's statement only: every step
-- is an index lookup or an ordered index walk (they are still possible where nothing else is; they just
-- never win on a guess).
CREATE FUNCTION securepush.claim_deliveries(
    p_limit integer, p_platforms text[], p_lease_ms bigint, p_token uuid, p_worker uuid, p_badge boolean, p_badge_limit integer
) RETURNS TABLE (
    id uuid, notification_id uuid, device_id uuid, platform text, token text, options text, active boolean,
    expires_at timestamptz, priority smallint, attempts integer, unread bigint, clear_ids uuid[]
)
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
#variable_conflict use_column
BEGIN
    -- PL/pgSQL keeps the statement's plan for the session: a claim is not planned again on every call.
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
                  d.expires_at, d.priority, d.attempts, dev.user_id, d.clear_ids
    ),
    -- The badge: each recipient's unexpired unread notifications (at most p_badge_limit), counted once per user of
    -- the batch (only when asked for), into one map looked up per claimed row (no join to plan).
    badges AS MATERIALIZED (
        SELECT jsonb_object_agg(u.user_id, (
                   SELECT count(*) FROM (
                       SELECT 1 FROM securepush.notifications n
                       WHERE n.user_id = u.user_id AND n.read_at IS NULL AND n.expires_at > now()
                       LIMIT p_badge_limit
                   ) unread)) AS counts
        FROM (SELECT DISTINCT claimed.user_id FROM claimed) u
        WHERE p_badge
    )
    SELECT claimed.id, claimed.notification_id, claimed.device_id, claimed.platform, claimed.token, claimed.options,
           claimed.active, claimed.expires_at, claimed.priority, claimed.attempts,
           ((SELECT b.counts FROM badges b) ->> claimed.user_id)::bigint,
           claimed.clear_ids
    FROM claimed;
END
$$;
