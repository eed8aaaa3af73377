-- Read sync: when a notification is first read, each of the user's other active devices that received
-- its push gets a `clear` push (id-only, low priority) so the app can remove what it showed and update its
-- badge. Clears are deliveries of their own kind in the same queue (same leases, retries, fencing,
-- pruning), coalesced per device: at most one pending clear per device, pushed after the configured window
-- and carrying the newest ids. Also: the fetch statistics and the producers' status view of the fetch
-- lifecycle (005), counting only the pushes that announce a notification; WNS devices may name their app
-- (`app`, SECUREPUSH_WNS_APPS).

ALTER TABLE securepush.deliveries
    ADD COLUMN kind text NOT NULL DEFAULT 'notify' CONSTRAINT deliveries_kind_valid CHECK (kind IN ('notify', 'clear')),
    -- For a clear: the notifications to remove, newest first (at most 20); NULL for a notify.
    ADD COLUMN clear_ids uuid[];
ALTER TABLE securepush.delivery_log
    ADD COLUMN kind text NOT NULL DEFAULT 'notify' CONSTRAINT delivery_log_kind_valid CHECK (kind IN ('notify', 'clear'));

-- The coalescing point: one pending clear per device; further reads fold their ids into it.
CREATE UNIQUE INDEX deliveries_one_pending_clear ON securepush.deliveries (device_id) WHERE kind = 'clear' AND state = 'pending';
-- Which devices received a notification (the clear's targets).
CREATE INDEX delivery_log_sent_notification_idx ON securepush.delivery_log (notification_id) WHERE outcome = 'sent' AND kind = 'notify';

-- Written by `securepush serve` from SECUREPUSH_READ_SYNC and SECUREPUSH_READ_SYNC_WINDOW.
INSERT INTO securepush.settings (key, value) VALUES ('read_sync', 'on'), ('read_sync_window', '2 seconds') ON CONFLICT (key) DO NOTHING;

-- Schedules clears for the notifications this statement marked read (read_at from NULL to a time), for
-- every other active device of the user whose push was accepted and which has not fetched it itself.
CREATE FUNCTION securepush.schedule_clears() RETURNS trigger
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
        PERFORM pg_notify('securepush_deliveries', '');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER notifications_schedule_clears
AFTER UPDATE ON securepush.notifications
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION securepush.schedule_clears();

-- Cancelled deliveries keep their kind in the history.
CREATE OR REPLACE FUNCTION securepush.cancel_pending_deliveries(target_device uuid, reason text, keep_user text DEFAULT NULL) RETURNS integer
LANGUAGE sql AS $$
    WITH gone AS (
        DELETE FROM securepush.deliveries dl
        USING securepush.notifications n
        WHERE dl.device_id = target_device AND dl.state = 'pending' AND n.id = dl.notification_id
          AND (keep_user IS NULL OR n.user_id <> keep_user)
        RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at, dl.kind
    ),
    logged AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error, created_at, kind)
        SELECT id, notification_id, device_id, platform, 'cancelled', attempts, reason, created_at, kind FROM gone
        RETURNING 1
    )
    SELECT count(*)::integer FROM logged
$$;

-- Per platform, pushes accepted in the last `window_` and how many of them were fetched by the device
-- they went to, with the push-to-fetch latency's median and 99th percentile (seconds; NULL when none was
-- fetched; a fetch before the push was accepted counts as 0). Reads the window through
-- `delivery_log_finished_idx` (accepted_at <= finished_at) and each fetch through the primary key of `fetches` (005).
-- Only pushes that announce a notification count, never clears (which are not fetched).
CREATE FUNCTION securepush.fetch_stats(window_ interval DEFAULT interval '1 hour')
RETURNS TABLE (
    platform text,
    accepted bigint,
    fetched bigint,
    fetch_ratio double precision,
    push_to_fetch_p50_seconds double precision,
    push_to_fetch_p99_seconds double precision
)
LANGUAGE sql STABLE AS $$
    WITH pushed AS (
        SELECT l.platform,
               f.fetched_at IS NOT NULL AS was_fetched,
               greatest(0, extract(epoch FROM f.fetched_at - coalesce(l.accepted_at, l.finished_at)))::float8 AS latency
        FROM securepush.delivery_log l
        LEFT JOIN securepush.fetches f ON f.notification_id = l.notification_id AND f.device_id = l.device_id
        WHERE l.outcome = 'sent' AND l.kind = 'notify'
          AND l.finished_at > now() - window_
          AND coalesce(l.accepted_at, l.finished_at) > now() - window_
    )
    SELECT platform,
           count(*),
           count(*) FILTER (WHERE was_fetched),
           (count(*) FILTER (WHERE was_fetched))::float8 / count(*),
           percentile_cont(0.5) WITHIN GROUP (ORDER BY latency) FILTER (WHERE was_fetched),
           percentile_cont(0.99) WITHIN GROUP (ORDER BY latency) FILTER (WHERE was_fetched)
    FROM pushed
    GROUP BY platform
    ORDER BY platform
$$;

-- For producers: one row per notification and device, from the moment the delivery is queued. `state` is
-- `pending` (waiting, perhaps for a retry at `next_attempt_at`), `claimed` (being pushed), `finished`
-- (`outcome` says how: sent, failed, token_invalid, cancelled, expired) or `not_pushed` (the device fetched
-- the notification without a push of its own, e.g. registered later and caught up). `accepted_at` is when
-- the platform accepted the push, `fetched_at` when this device first fetched the payload, `read_at` when
-- any of the user's devices first did. Filter by `notification_id` or `user_id`: both use an index.
-- It shows a notification's own pushes, not the clears that followed its reading.
CREATE VIEW securepush.notification_status AS
SELECT n.id AS notification_id,
       n.user_id,
       x.device_id,
       x.platform,
       x.state,
       x.outcome,
       x.attempts,
       x.next_attempt_at,
       x.last_error,
       x.accepted_at,
       x.finished_at,
       f.fetched_at,
       n.read_at,
       n.created_at,
       n.expires_at
FROM securepush.notifications n
CROSS JOIN LATERAL (
    SELECT d.device_id, d.platform, d.state, NULL::text AS outcome, d.attempts,
           CASE WHEN d.state = 'pending' THEN d.run_at END AS next_attempt_at, d.last_error,
           NULL::timestamptz AS accepted_at, NULL::timestamptz AS finished_at
    FROM securepush.deliveries d
    WHERE d.notification_id = n.id AND d.kind = 'notify'
    UNION ALL
    SELECT l.device_id, l.platform, 'finished', l.outcome, l.attempts, NULL, l.last_error,
           CASE WHEN l.outcome = 'sent' THEN coalesce(l.accepted_at, l.finished_at) END, l.finished_at
    FROM securepush.delivery_log l
    WHERE l.notification_id = n.id AND l.kind = 'notify'
    UNION ALL
    SELECT f.device_id, dev.platform, 'not_pushed', NULL, 0, NULL, NULL, NULL, NULL
    FROM securepush.fetches f
    LEFT JOIN securepush.devices dev ON dev.id = f.device_id
    WHERE f.notification_id = n.id
      AND NOT EXISTS (SELECT 1 FROM securepush.deliveries d WHERE d.notification_id = n.id AND d.device_id = f.device_id AND d.kind = 'notify')
      AND NOT EXISTS (SELECT 1 FROM securepush.delivery_log l WHERE l.notification_id = n.id AND l.device_id = f.device_id AND l.kind = 'notify')
) x
LEFT JOIN securepush.fetches f ON f.notification_id = n.id AND f.device_id = x.device_id;

-- WNS devices may name their app (one of SECUREPUSH_WNS_APPS): checked here, the rest as before.
ALTER FUNCTION securepush.validate_device(text, text, jsonb) RENAME TO validate_device_options;

CREATE FUNCTION securepush.validate_device(platform text, token text, options jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF platform = 'wns' AND jsonb_typeof(options) = 'object' AND options ? 'app' THEN
        IF jsonb_typeof(options -> 'app') <> 'string' OR (options ->> 'app') !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,255}$' THEN
            RAISE EXCEPTION 'app must be an app name from SECUREPUSH_WNS_APPS (letters, digits, . _ -)' USING ERRCODE = '22023';
        END IF;
        options := options - 'app';
    END IF;
    PERFORM securepush.validate_device_options(platform, token, options);
END
$$;
