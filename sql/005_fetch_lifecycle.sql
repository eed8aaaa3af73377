-- The fetch lifecycle: when a platform accepted each push, when each device first fetched each
-- notification, the hourly fetch statistics operators watch, and a per-device status view for producers.

-- When the push service accepted a `sent` delivery: the moment the dispatcher got the answer, which
-- precedes `finished_at` (the write of its whole claimed batch) by up to the batch's duration. NULL for
-- other outcomes, and for rows written before this migration (readers fall back to `finished_at`).
ALTER TABLE securepush.delivery_log ADD COLUMN accepted_at timestamptz;

-- The first fetch of a notification's payload by each device. The read API writes it in the same
-- statement that marks the notification read; it goes with its notification (pruning). `device_id` is a
-- plain reference, as in `delivery_log` (devices are deactivated, never deleted).
CREATE TABLE securepush.fetches (
    notification_id uuid NOT NULL REFERENCES securepush.notifications (id) ON DELETE CASCADE,
    device_id       uuid NOT NULL,
    fetched_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (notification_id, device_id)
);

-- Per platform, pushes accepted in the last `window_` and how many of them were fetched by the device
-- they went to, with the push-to-fetch latency's median and 99th percentile (seconds; NULL when none was
-- fetched; a fetch before the push was accepted counts as 0). Reads the window through
-- `delivery_log_finished_idx` (accepted_at <= finished_at) and each fetch through the primary key above.
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
        WHERE l.outcome = 'sent'
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
    WHERE d.notification_id = n.id
    UNION ALL
    SELECT l.device_id, l.platform, 'finished', l.outcome, l.attempts, NULL, l.last_error,
           CASE WHEN l.outcome = 'sent' THEN coalesce(l.accepted_at, l.finished_at) END, l.finished_at
    FROM securepush.delivery_log l
    WHERE l.notification_id = n.id
    UNION ALL
    SELECT f.device_id, dev.platform, 'not_pushed', NULL, 0, NULL, NULL, NULL, NULL
    FROM securepush.fetches f
    LEFT JOIN securepush.devices dev ON dev.id = f.device_id
    WHERE f.notification_id = n.id
      AND NOT EXISTS (SELECT 1 FROM securepush.deliveries d WHERE d.notification_id = n.id AND d.device_id = f.device_id)
      AND NOT EXISTS (SELECT 1 FROM securepush.delivery_log l WHERE l.notification_id = n.id AND l.device_id = f.device_id)
) x
LEFT JOIN securepush.fetches f ON f.notification_id = n.id AND f.device_id = x.device_id;
