-- securepush.fan_out: routine file (docs/sql.md).
--
-- Fan-out with the controls: critical refused unless enabled; muted categories get no deliveries; a
-- notification with a collapse key supersedes the user's older ones still waiting (and, within one
-- statement, the one with the latest deliver_at, then id, wins); each delivery waits for deliver_at and
-- the user's quiet window ('scheduled') or is due at once ('pending').
-- Its plans must not depend on statistics: a broadcast often runs right after a bulk device import, before
-- any ANALYZE, and a nested loop over a sequential scan of devices took 71 s for 20,000 notifications (1.4 s
-- with the index). Without sequential scans, each notification finds its user's devices by index.
CREATE OR REPLACE FUNCTION securepush.fan_out()
 RETURNS trigger
 LANGUAGE plpgsql SECURITY DEFINER SET enable_seqscan TO 'off' SET jit TO 'off' SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    IF EXISTS (SELECT 1 FROM new_notifications n WHERE n.urgency = 'critical')
       AND coalesce((SELECT value FROM securepush.settings WHERE key = 'critical_urgency'), 'off') <> 'on' THEN
        RAISE EXCEPTION 'urgency critical is not enabled in this deployment (SECUREPUSH_CRITICAL_URGENCY=on)'
            USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.badge_changes (user_id, change, effective_at)
    SELECT n.user_id, sum(s.change), s.effective_at
    FROM new_notifications n, securepush.badge_steps(1, n.read_at, n.purged_at, n.deliver_at, n.expires_at) s
    GROUP BY n.user_id, s.effective_at
    HAVING sum(s.change) <> 0;
    IF EXISTS (SELECT 1 FROM new_notifications n WHERE n.collapse_key IS NOT NULL) THEN
        -- Only a notification that will be pushed supersedes (not an expired, purged or muted one).
        WITH newest AS (
            SELECT DISTINCT ON (n.user_id, n.collapse_key) n.id, n.user_id, n.collapse_key
            FROM new_notifications n
            WHERE n.collapse_key IS NOT NULL AND n.expires_at > now() AND n.payload IS NOT NULL
              AND (n.category IS NULL OR NOT EXISTS (
                      SELECT 1 FROM securepush.category_mutes m WHERE m.user_id = n.user_id AND m.category = n.category))
            ORDER BY n.user_id, n.collapse_key, coalesce(n.deliver_at, n.created_at) DESC, n.id DESC
        ),
        gone AS (
            DELETE FROM securepush.deliveries dl
            USING newest w, securepush.notifications prior
            WHERE prior.user_id = w.user_id AND prior.collapse_key = w.collapse_key AND prior.id <> w.id
              AND dl.notification_id = prior.id AND dl.kind = 'notify' AND dl.state IN ('scheduled', 'pending')
            RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at, w.id AS by_id
        )
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error, created_at, kind)
        SELECT g.id, g.notification_id, g.device_id, g.platform, 'superseded', g.attempts, 'superseded by ' || g.by_id, g.created_at, 'notify'
        FROM gone g;
        -- Same-statement losers never get deliveries; their devices' log says why.
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error, created_at, kind)
        SELECT gen_random_uuid(), n.id, d.id, d.platform, 'superseded', 0, 'superseded by ' || w.id, now(), 'notify'
        FROM new_notifications n
        JOIN (SELECT DISTINCT ON (x.user_id, x.collapse_key) x.id, x.user_id, x.collapse_key
              FROM new_notifications x WHERE x.collapse_key IS NOT NULL
              ORDER BY x.user_id, x.collapse_key, coalesce(x.deliver_at, x.created_at) DESC, x.id DESC) w
          ON w.user_id = n.user_id AND w.collapse_key = n.collapse_key AND w.id <> n.id
        JOIN securepush.devices d ON d.user_id = n.user_id AND d.active
        WHERE n.expires_at > now() AND n.payload IS NOT NULL;
    END IF;
    -- A muted category's notification is stored and never pushed: its outcome event says so, once.
    IF EXISTS (SELECT 1 FROM new_notifications n WHERE n.category IS NOT NULL) THEN
        INSERT INTO securepush.delivery_events (notification_id, event, detail)
        SELECT n.id, 'muted', n.category
        FROM new_notifications n
        WHERE n.category IS NOT NULL AND n.expires_at > now() AND n.payload IS NOT NULL
          AND EXISTS (SELECT 1 FROM securepush.category_mutes m WHERE m.user_id = n.user_id AND m.category = n.category);
    END IF;
    WITH wanted AS (
        SELECT n.id, n.user_id, n.priority, n.expires_at, n.urgency, n.traceparent,
               CASE WHEN n.collapse_key IS NOT NULL THEN securepush.collapse_digest(n.user_id, n.collapse_key) END AS collapse_id,
               CASE WHEN q.user_id IS NULL OR n.urgency IN ('time_sensitive', 'critical')
                    THEN greatest(coalesce(n.deliver_at, now()), now())
                    ELSE securepush.quiet_release(q.time_zone, q.starts, q.ends, greatest(coalesce(n.deliver_at, now()), now()))
               END AS run_at
        FROM new_notifications n
        LEFT JOIN securepush.quiet_hours q ON q.user_id = n.user_id
        WHERE n.expires_at > now() AND n.payload IS NOT NULL
          AND (n.category IS NULL OR NOT EXISTS (
                  SELECT 1 FROM securepush.category_mutes m WHERE m.user_id = n.user_id AND m.category = n.category))
          AND (n.collapse_key IS NULL OR NOT EXISTS (
                  SELECT 1 FROM new_notifications x
                  WHERE x.user_id = n.user_id AND x.collapse_key = n.collapse_key AND x.id <> n.id
                    AND (coalesce(x.deliver_at, x.created_at), x.id) > (coalesce(n.deliver_at, n.created_at), n.id)))
    ),
    -- Quiet hours that end after the notification expires: never pushed, and the history says why.
    held_past_expiry AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error, created_at, kind)
        SELECT gen_random_uuid(), w.id, d.id, d.platform, 'expired', 0, 'quiet hours end after the notification expires', now(), 'notify'
        FROM wanted w
        JOIN securepush.devices d ON d.user_id = w.user_id AND d.active
        WHERE w.run_at >= w.expires_at
    )
    INSERT INTO securepush.deliveries (notification_id, device_id, platform, priority, expires_at, urgency, collapse_id, run_at, state,
                                       traceparent)
    SELECT w.id, d.id, d.platform, w.priority, w.expires_at, w.urgency, w.collapse_id, w.run_at,
           CASE WHEN w.run_at > now() THEN 'scheduled' ELSE 'pending' END, w.traceparent
    FROM wanted w
    JOIN securepush.devices d ON d.user_id = w.user_id AND d.active
    WHERE w.run_at < w.expires_at;
    -- Woken also when all of them were scheduled: a claim that finds nothing is cheaper than telling them apart.
    IF FOUND THEN
        PERFORM securepush.wake_dispatchers();
    END IF;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.fan_out() FROM PUBLIC;
