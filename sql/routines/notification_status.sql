-- securepush.notification_status: routine file (docs/sql.md).
--
-- Operators see scheduled and held deliveries with their next attempt. A producer login sees the notifications
-- it enqueued; an operator login (securepush_operator) and the server see all (all_producers_visible, evaluated
-- once per query).
CREATE OR REPLACE VIEW securepush.notification_status AS
SELECT n.id AS notification_id, n.user_id, x.device_id, x.platform, x.state, x.outcome, x.attempts, x.next_attempt_at,
       x.last_error, x.accepted_at, x.finished_at, f.fetched_at, n.read_at, n.created_at, n.expires_at
FROM securepush.notifications n
CROSS JOIN LATERAL (
    SELECT d.device_id, d.platform, d.state, NULL::text AS outcome, d.attempts,
           CASE WHEN d.state IN ('pending', 'scheduled') THEN d.run_at END AS next_attempt_at,
           d.last_error, NULL::timestamptz AS accepted_at, NULL::timestamptz AS finished_at
    FROM securepush.deliveries d WHERE d.notification_id = n.id AND d.kind = 'notify'
    UNION ALL
    -- Being pushed now as an item of a claim's lease (since 046): its first attempt.
    SELECT c.device_id, c.platform, 'claimed', NULL, 1, NULL, NULL, NULL, NULL
    FROM securepush.claimed_items c WHERE c.notification_id = n.id
    UNION ALL
    SELECT l.device_id, l.platform, 'finished', l.outcome, l.attempts, NULL::timestamptz, l.last_error,
           CASE WHEN l.outcome = 'sent' THEN coalesce(l.accepted_at, l.finished_at) END, l.finished_at
    FROM securepush.delivery_log l WHERE l.notification_id = n.id AND l.kind = 'notify'
    UNION ALL
    -- Committed and not yet fanned out (the dispatchers do it within milliseconds): waiting for each of the
    -- user's active devices.
    SELECT dev.id, dev.platform, CASE WHEN n.deliver_at > now() THEN 'scheduled' ELSE 'pending' END, NULL, 0,
           greatest(n.deliver_at, n.created_at), NULL, NULL, NULL
    FROM securepush.fan_out_queue q JOIN securepush.devices dev ON dev.user_id = n.user_id AND dev.active
    WHERE q.notification_id = n.id
    UNION ALL
    SELECT f.device_id, dev.platform, 'not_pushed', NULL, 0, NULL, NULL, NULL, NULL
    FROM securepush.fetches f LEFT JOIN securepush.devices dev ON dev.id = f.device_id
    WHERE f.notification_id = n.id
      AND NOT EXISTS (SELECT 1 FROM securepush.deliveries d
                      WHERE d.notification_id = n.id AND d.device_id = f.device_id AND d.kind = 'notify')
      AND NOT EXISTS (SELECT 1 FROM securepush.delivery_log l
                      WHERE l.notification_id = n.id AND l.device_id = f.device_id AND l.kind = 'notify')
      AND NOT EXISTS (SELECT 1 FROM securepush.claimed_items c
                      WHERE c.notification_id = n.id AND c.device_id = f.device_id)
) x
LEFT JOIN securepush.fetches f ON f.notification_id = n.id AND f.device_id = x.device_id
WHERE n.producer = session_user OR (SELECT securepush.all_producers_visible());
GRANT SELECT ON securepush.notification_status TO securepush_producer;
