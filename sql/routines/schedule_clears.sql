-- securepush.schedule_clears: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.schedule_clears()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
DECLARE
    enabled boolean := coalesce((SELECT value = 'on' FROM securepush.settings WHERE key = 'read_sync'), true);
    window_ interval := coalesce((SELECT value::interval FROM securepush.settings WHERE key = 'read_sync_window'),
        interval '2 seconds');
BEGIN
    IF NOT enabled THEN
        RETURN NULL;
    END IF;
    -- Read, then each read's sent pushes, then their devices, in that order: each lookup a subquery of its own
    -- (OFFSET 0 and LIMIT 1 keep the planner from merging them into one join it may reorder). Joined in one
    -- statement, stale statistics (devices refilled since their last ANALYZE) had the planner walk every active
    -- device and probe the history once per device for each read (stop 67: ops/bench's second read run).
    WITH targets AS (
        SELECT DISTINCT n.id AS notification_id, n.created_at, n.expires_at, l.device_id, dev.platform
        FROM new_rows n
        JOIN old_rows o ON o.id = n.id AND o.read_at IS NULL
        CROSS JOIN LATERAL (SELECT l.device_id FROM securepush.delivery_log l
                            WHERE l.notification_id = n.id AND l.outcome = 'sent' AND l.kind = 'notify'
                            OFFSET 0) l
        CROSS JOIN LATERAL (SELECT dev.platform FROM securepush.devices dev
                            WHERE dev.id = l.device_id AND dev.active
                            LIMIT 1) dev
        WHERE n.read_at IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM securepush.fetches f WHERE f.notification_id = n.id
              AND f.device_id = l.device_id)
    )
    INSERT INTO securepush.deliveries AS d (notification_id, device_id, platform, kind, clear_ids, priority, run_at,
        expires_at)
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
$function$;
REVOKE ALL ON FUNCTION securepush.schedule_clears() FROM PUBLIC;
