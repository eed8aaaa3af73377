-- securepush.fan_out_batch: routine file (docs/sql.md).
--
-- Fans out the notifications p_ids that are still in securepush.fan_out_queue (taking their rows: one
-- already taken by a committed fan-out is skipped, one held by another transaction is waited for), with the
-- controls: muted categories get no deliveries; a notification with a collapse key supersedes the user's
-- other ones with that key still waiting, and is itself superseded when a newer one that will be pushed exists
-- (securepush.superseding); each delivery waits for deliver_at and the user's quiet window ('scheduled') or is
-- due at once ('pending'); one that expired before its fan-out is logged 'expired' for each device; the badge
-- rows of each notification as it is now (the badge triggers leave a notification still queued to this).
-- A claim that fans out (claim_deliveries) passes its platforms, how many more it may claim and its lease:
-- that many of the due deliveries of those platforms, highest priority first, then in queue order, are the
-- items of its lease: one securepush.claims row for them all (since 046; delivery rows written claimed in
-- 035), without their 'queued' events, which their outcome rows carry (since 036).
-- Returns the deliveries created; the caller wakes the dispatchers (claim_deliveries does).
-- Its plans must not depend on statistics: a broadcast often runs right after a bulk device import, before
-- any ANALYZE, and a nested loop over a sequential scan of devices took 71 s for 20,000 notifications (1.4 s
-- with the index). Without sequential scans, each notification finds its user's devices by index; the other
-- plan switches are set as a producer's session has them (the claim that calls it turns them off). Since 044
-- its plans are generic (made once per session, not at every call: planning was most of a small claim's time),
-- and its statements find the batch's notifications by primary key whatever the statistics say: through
-- securepush.fan_out_rows, or (wanted, which has no other condition an index could serve) by joining the ids.
CREATE OR REPLACE FUNCTION securepush.fan_out_batch(p_ids uuid[], p_claim_platforms text[], p_claim_limit integer,
    p_lease_until timestamp with time zone, p_token uuid, p_worker uuid)
 RETURNS integer
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'on'
 SET enable_sort TO 'on'
 SET enable_hashjoin TO 'on'
 SET enable_mergejoin TO 'on'
 SET jit TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
DECLARE
    taken uuid[];
    places bigint[];
    created integer;
    collapsing boolean;
    expired boolean;
    categorized boolean;
BEGIN
    WITH t AS (
        DELETE FROM securepush.fan_out_queue q WHERE q.notification_id = ANY(p_ids) RETURNING q.notification_id,
            q.position
    )
    SELECT array_agg(t.notification_id ORDER BY t.position), array_agg(t.position ORDER BY t.position) INTO taken,
        places FROM t;
    IF taken IS NULL THEN
        RETURN 0;
    END IF;
    -- One read of the batch for its badge rows and for which of the steps below it may need (049: each step's
    -- own check read the batch again, 500 primary-key lookups apiece). A flag only skips a step that cannot
    -- apply; each step's own WHERE decides which notifications it takes (050: one home for each condition).
    WITH batch AS MATERIALIZED (
        SELECT n.user_id, n.read_at, n.purged_at, n.deliver_at, n.expires_at, n.collapse_key, n.category
        FROM securepush.fan_out_rows(taken) n
    ),
    badges AS (
        INSERT INTO securepush.badge_changes (user_id, change, effective_at, ends_at)
        SELECT b.user_id, sum(s.change), s.effective_at, s.ends_at
        FROM batch b, securepush.badge_steps(1, b.read_at, b.purged_at, b.deliver_at, b.expires_at) s
        GROUP BY b.user_id, s.effective_at, s.ends_at
        HAVING sum(s.change) <> 0
    )
    SELECT coalesce(bool_or(b.collapse_key IS NOT NULL), false), coalesce(bool_or(b.expires_at <= now()), false),
           coalesce(bool_or(b.category IS NOT NULL), false)
    INTO collapsing, expired, categorized
    FROM batch b;
    IF collapsing THEN
        -- A notification that will be pushed and that no newer one supersedes takes the place of the others
        -- with its key still waiting.
        WITH newest AS (
            SELECT n.id, n.user_id, n.collapse_key
            FROM securepush.fan_out_rows(taken) n
            WHERE n.collapse_key IS NOT NULL AND securepush.pushable(n)
              AND NOT EXISTS (SELECT 1 FROM securepush.superseding(n, taken, places))
        ),
        gone AS (
            DELETE FROM securepush.deliveries dl
            USING newest w, securepush.notifications prior
            WHERE prior.user_id = w.user_id AND prior.collapse_key = w.collapse_key AND prior.id <> w.id
              AND dl.notification_id = prior.id AND dl.kind = 'notify' AND dl.state IN ('scheduled', 'pending')
            RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at, w.id AS by_id
        )
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error,
            created_at, kind)
        SELECT g.id, g.notification_id, g.device_id, g.platform, 'superseded', g.attempts, 'superseded by ' || g.by_id,
            g.created_at, 'notify'
        FROM gone g;
        -- One superseded before its fan-out never gets deliveries; its devices' log says by which.
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error,
            created_at, kind)
        SELECT gen_random_uuid(), n.id, d.id, d.platform, 'superseded', 0, 'superseded by ' || w.id, now(), 'notify'
        FROM securepush.fan_out_rows(taken) n
        CROSS JOIN LATERAL (SELECT x.id FROM securepush.superseding(n, taken, places) x LIMIT 1) w
        JOIN securepush.devices d ON d.user_id = n.user_id AND d.active
        WHERE n.collapse_key IS NOT NULL AND n.expires_at > now() AND n.payload IS NOT NULL;
    END IF;
    -- Expired before any dispatcher fanned it out: never pushed, and the history says so.
    IF expired THEN
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error,
            created_at, kind)
        SELECT gen_random_uuid(), n.id, d.id, d.platform, 'expired', 0, 'notification expired before its fan-out',
            now(), 'notify'
        FROM securepush.fan_out_rows(taken) n
        JOIN securepush.devices d ON d.user_id = n.user_id AND d.active
        WHERE n.expires_at <= now() AND n.payload IS NOT NULL;
    END IF;
    -- A muted category's notification is stored and never pushed: its outcome event says so, once.
    IF categorized THEN
        INSERT INTO securepush.delivery_events (notification_id, event, detail)
        SELECT n.id, 'muted', n.category
        FROM securepush.fan_out_rows(taken) n
        WHERE n.category IS NOT NULL AND n.expires_at > now() AND n.payload IS NOT NULL
          AND securepush.category_muted(n.user_id, n.category);
    END IF;
    WITH wanted AS (
        SELECT n.id, t.place, n.user_id, n.priority, n.expires_at, n.urgency, n.traceparent,
               securepush.collapse_digest(n.user_id, n.collapse_key) AS collapse_id,
               CASE WHEN q.user_id IS NULL OR n.urgency IN ('time_sensitive', 'critical')
                    THEN greatest(coalesce(n.deliver_at, now()), now())
                    ELSE securepush.quiet_release(q.time_zone, q.starts, q.ends, greatest(coalesce(n.deliver_at,
                        now()), now()))
               END AS run_at
        FROM unnest(taken) WITH ORDINALITY AS t(id, place)
        JOIN securepush.notifications n ON n.id = t.id
        LEFT JOIN securepush.quiet_hours q ON q.user_id = n.user_id
        WHERE securepush.pushable(n)
          AND (n.collapse_key IS NULL OR NOT EXISTS (SELECT 1 FROM securepush.superseding(n, taken, places)))
    ),
    -- Quiet hours that end after the notification expires: never pushed, and the history says why.
    held_past_expiry AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error,
            created_at, kind)
        SELECT gen_random_uuid(), w.id, d.id, d.platform, 'expired', 0,
            'quiet hours end after the notification expires', now(), 'notify'
        FROM wanted w
        JOIN securepush.devices d ON d.user_id = w.user_id AND d.active
        WHERE w.run_at >= w.expires_at
    ),
    planned AS MATERIALIZED (
        SELECT w.id, d.id AS device_id, d.platform, w.priority, w.expires_at, w.urgency, w.collapse_id, w.run_at,
            w.traceparent, w.place,
               e.eligible AND row_number() OVER (PARTITION BY e.eligible ORDER BY w.priority DESC, w.run_at, w.place,
                   d.id) <= p_claim_limit
                   AS claim
        FROM wanted w
        JOIN securepush.devices d ON d.user_id = w.user_id AND d.active
        CROSS JOIN LATERAL (SELECT p_token IS NOT NULL AND w.run_at <= now()
            AND d.platform = ANY(p_claim_platforms) AS eligible) e
        WHERE w.run_at < w.expires_at
    ),
    -- The claim's share: one lease row (since 046), pushed in this order.
    leased AS (
        INSERT INTO securepush.claims (token, worker, lease_expires_at, ids, notification_ids, device_ids, platforms)
        SELECT p_token, p_worker, p_lease_until, array_agg(gen_random_uuid()),
               array_agg(r.id ORDER BY r.priority DESC, r.run_at, r.place, r.device_id),
               array_agg(r.device_id ORDER BY r.priority DESC, r.run_at, r.place, r.device_id),
               array_agg(r.platform ORDER BY r.priority DESC, r.run_at, r.place, r.device_id)
        FROM planned r
        WHERE r.claim
        HAVING count(*) > 0
        RETURNING cardinality(ids) AS items
    ),
    queued AS (
        INSERT INTO securepush.deliveries (notification_id, device_id, platform, priority, expires_at, urgency,
            collapse_id, run_at, state, traceparent)
        SELECT r.id, r.device_id, r.platform, r.priority, r.expires_at, r.urgency, r.collapse_id, r.run_at,
               CASE WHEN r.run_at > now() THEN 'scheduled' ELSE 'pending' END, r.traceparent
        FROM planned r
        WHERE NOT r.claim
        RETURNING 1
    )
    SELECT coalesce((SELECT sum(l.items) FROM leased l), 0) + (SELECT count(*) FROM queued) INTO created;
    RETURN created;
END
$function$;
REVOKE ALL ON FUNCTION securepush.fan_out_batch(p_ids uuid[], p_claim_platforms text[], p_claim_limit integer,
    p_lease_until timestamp with time zone, p_token uuid, p_worker uuid) FROM PUBLIC;
-- The fan-out without a claim (cancel's, and 033's signature).
CREATE OR REPLACE FUNCTION securepush.fan_out_batch(p_ids uuid[])
 RETURNS integer
 LANGUAGE sql
AS $function$
    SELECT securepush.fan_out_batch(p_ids, '{}'::text[], 0, NULL::timestamptz, NULL::uuid, NULL::uuid)
$function$;
REVOKE ALL ON FUNCTION securepush.fan_out_batch(p_ids uuid[]) FROM PUBLIC;
