-- Wake-ups only for dispatchers that wait for one.
--
-- A NOTIFY makes its transaction take one database-wide lock at commit and hold it through the commit's
-- WAL flush, so notifying commits run one at a time: 16 producers inserting single notifications
-- committed about 1,150 a second beside 14,500 into a plain table (ops/bench, producers row). A
-- dispatcher that has work claims again as soon as a batch is done, and one that just found the queue
-- empty keeps polling for a moment (1, 2, 4 ... 128 ms); only then does it say that it waits for a
-- wake-up (`securepush.await_wakeup`, which sets `awaiting_wakeup`) and claims once more before it
-- waits. A claim that finds work clears the flag. The statements that add deliveries notify only when
-- some running dispatcher has the flag set, so a busy fleet is not notified at all, and an idle one as
-- before.
--
-- The one interleaving this can miss: a producer reads "busy" just before the last busy dispatcher sets
-- its flag, and commits after that dispatcher's last claim. Its deliveries wait for the next wake-up
-- (any later notifying insert) or the dispatcher's fallback poll (SECUREPUSH_POLL_INTERVAL, 1 s by
-- default): later, never lost. A dispatcher of an earlier version never clears the flag (it defaults
-- to set): producers keep notifying it as before.

ALTER TABLE securepush.dispatchers ADD COLUMN awaiting_wakeup boolean NOT NULL DEFAULT true;

-- NOTIFY the dispatchers' channel when a running dispatcher waits for work.
CREATE FUNCTION securepush.wake_dispatchers() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM securepush.dispatchers WHERE awaiting_wakeup AND stopped_at IS NULL) THEN
        PERFORM pg_notify('securepush_deliveries', '');
    END IF;
END
$$;

-- Called by a dispatcher about to wait for a wake-up (after its last claim found nothing).
CREATE FUNCTION securepush.await_wakeup(p_worker uuid) RETURNS void
LANGUAGE sql AS $$
    UPDATE securepush.dispatchers SET awaiting_wakeup = true WHERE id = p_worker AND NOT awaiting_wakeup;
$$;

-- 001's fan-out and 006's clears, waking through it.
CREATE OR REPLACE FUNCTION securepush.fan_out() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO securepush.deliveries (notification_id, device_id, platform, priority, expires_at)
    SELECT n.id, d.id, d.platform, n.priority, n.expires_at
    FROM new_notifications n
    JOIN securepush.devices d ON d.user_id = n.user_id AND d.active
    WHERE n.expires_at > now() AND n.payload IS NOT NULL;
    IF FOUND THEN
        PERFORM securepush.wake_dispatchers();
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION securepush.schedule_clears() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    enabled boolean := coalesce((SELECT value = 'on' FROM securepush.settings WHERE key = 'read_sync'), true);
    window_ interval := coalesce((SELECT value::interval FROM securepush.settings WHERE key = 'read_sync_window'), interval '2 seconds');
BEGIN
    IF NOT enabled THEN
        RETURN NULL;
    END IF;
    WITH targets AS (
        SELECT DISTINCT n.id AS notification_id, n.created_at, n.expires_at, l.device_id, dev.platform
        FROM new_rows n
        JOIN old_rows o ON o.id = n.id AND o.read_at IS NULL
        JOIN securepush.delivery_log l ON l.notification_id = n.id AND l.outcome = 'sent' AND l.kind = 'notify'
        JOIN securepush.devices dev ON dev.id = l.device_id AND dev.active
        WHERE n.read_at IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM securepush.fetches f WHERE f.notification_id = n.id AND f.device_id = l.device_id)
    )
    INSERT INTO securepush.deliveries AS d (notification_id, device_id, platform, kind, clear_ids, priority, run_at, expires_at)
    SELECT (array_agg(notification_id ORDER BY created_at DESC, notification_id))[1], device_id, min(platform), 'clear',
           (array_agg(notification_id ORDER BY created_at DESC, notification_id))[1:20], -100, now() + window_,
           least(max(expires_at), now() + interval '1 day')
    FROM targets
    GROUP BY device_id
    ON CONFLICT (device_id) WHERE kind = 'clear' AND state = 'pending'
    DO UPDATE SET clear_ids = (
                      SELECT (array_agg(id ORDER BY position))[1:20]
                      FROM (SELECT DISTINCT ON (id) id, position
                            FROM unnest(EXCLUDED.clear_ids || d.clear_ids) WITH ORDINALITY AS u(id, position)
                            ORDER BY id, position) merged
                  ),
                  notification_id = EXCLUDED.notification_id,
                  expires_at = greatest(d.expires_at, EXCLUDED.expires_at);
    IF FOUND THEN
        PERFORM securepush.wake_dispatchers();
    END IF;
    RETURN NULL;
END
$$;

-- 010's claim; one that finds work clears the dispatcher's flag (it will claim again without a wake-up).
CREATE OR REPLACE FUNCTION securepush.claim_deliveries(
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
DECLARE
    claimed_rows integer;
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
    GET DIAGNOSTICS claimed_rows = ROW_COUNT;
    IF claimed_rows > 0 THEN
        UPDATE securepush.dispatchers d SET awaiting_wakeup = false WHERE d.id = p_worker AND d.awaiting_wakeup;
    END IF;
END
$$;
