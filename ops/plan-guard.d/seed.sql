-- Realistic rows for ops/plan-guard: a few thousand users with one to three devices on every platform,
-- notifications in every state (pending, scheduled, claimed, pushed, read, purged), quiet hours, mutes,
-- badge changes, a delivery history, throttles and audit rows. Inserted in bulk and never ANALYZEd here:
-- the first pass of the guard plans without statistics, as after a bulk import.
-- psql variables: users (default set by the caller).
\set ON_ERROR_STOP 1

INSERT INTO securepush.devices (user_id, platform, token, options, secret_hash, last_seen_at, active, updated_at)
SELECT 'u' || u,
       p.platform,
       CASE p.platform
           WHEN 'apns' THEN lpad(to_hex(u), 8, '0') || repeat('ab', 28)
           WHEN 'fcm' THEN 'fcm-token-' || u || '-' || repeat('x', 40)
           WHEN 'webpush' THEN 'https://push.example.net/wp/' || u
           ELSE 'sim-' || u || '-' || d
       END,
       CASE p.platform
           WHEN 'webpush' THEN jsonb_build_object('p256dh', 'B' || repeat('A', 86), 'auth', repeat('A', 22))
           ELSE '{}'::jsonb
       END,
       sha256(('secret-' || u || '-' || d)::bytea),
       now() - (u % 120) * interval '1 day',
       u % 50 <> 0,
       now() - (u % 400) * interval '1 day'
FROM generate_series(1, :users) u
CROSS JOIN LATERAL generate_series(1, 1 + u % 3) d
CROSS JOIN LATERAL (SELECT (ARRAY['simulated', 'apns', 'fcm', 'webpush'])[1 + (u + d) % 4] AS platform) p;

INSERT INTO securepush.dispatchers (id, host, pid, role, version, awaiting_wakeup, stopped_at)
SELECT gen_random_uuid(), 'host-' || g, 1000 + g, 'dispatcher', 'guard', g % 2 = 0, CASE WHEN g > 4 THEN now() END
FROM generate_series(1, 8) g;

INSERT INTO securepush.quiet_hours (user_id, time_zone, starts, ends)
SELECT 'u' || u, (ARRAY['Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'Pacific/Apia'])[1 + u % 4], '22:00', '07:00'
FROM generate_series(1, :users, 10) u;

INSERT INTO securepush.category_mutes (user_id, category)
SELECT 'u' || u, 'marketing' FROM generate_series(3, :users, 20) u;

INSERT INTO securepush.auth_failures (key, failures, last_at, blocked_until)
SELECT 'ip:10.0.' || (g / 250) || '.' || (g % 250), 1 + g % 9, now() - (g % 48) * interval '1 hour',
       CASE WHEN g % 7 = 0 THEN now() + interval '1 minute' END
FROM generate_series(1, 2000) g;

INSERT INTO securepush.audit_log (event, user_id, reason, at)
SELECT (ARRAY['device_registered', 'device_token_updated', 'throttled', 'sealing_key_set'])[1 + g % 4], 'u' || (1 + g % :users),
       'seed', now() - (g % 2000) * interval '1 hour'
FROM generate_series(1, 20000) g;

-- Notifications through the fan-out: now, later (scheduled), with collapse keys, categories and previews.
INSERT INTO securepush.notifications (user_id, payload, deliver_at, collapse_key, category, urgency, preview, priority)
SELECT 'u' || (1 + g % :users), jsonb_build_object('n', g),
       CASE WHEN g % 10 = 0 THEN now() + (g % 600) * interval '1 minute' END,
       CASE WHEN g % 7 = 0 THEN 'thread-' || (g % 5) END,
       CASE WHEN g % 5 = 0 THEN (ARRAY['marketing', 'security', 'chat'])[1 + g % 3] END,
       (ARRAY['passive', 'active', 'time_sensitive'])[1 + g % 3],
       CASE WHEN g % 4 = 0 THEN jsonb_build_object('title', 'hello') END,
       (g % 3) - 1
FROM generate_series(1, :users * 6) g;

-- A pushed history: claim, then complete as sent, failed or retried.
SELECT count(*) AS claimed FROM securepush.claim_deliveries(
    :users * 4, ARRAY['simulated', 'apns', 'fcm', 'webpush'], 60000, '00000000-0000-0000-0000-000000000001'::uuid,
    (SELECT id FROM securepush.dispatchers ORDER BY id LIMIT 1), true, 99, true);
SELECT securepush.complete_deliveries('00000000-0000-0000-0000-000000000001'::uuid, array_agg(id),
           array_agg(CASE WHEN k % 20 = 0 THEN 'retry' WHEN k % 33 = 0 THEN 'failed' ELSE 'sent' END),
           array_agg(1000::bigint), array_agg(CASE WHEN k % 20 = 0 THEN 'timeout' ELSE 'msg-' || k END), array_agg(5000::bigint))
FROM (SELECT id, row_number() OVER (ORDER BY id) AS k FROM securepush.deliveries
      WHERE lease_token = '00000000-0000-0000-0000-000000000001' ORDER BY id LIMIT :users * 3) c;
-- Still claimed: leases in flight.
-- Read: a fifth of the pushed notifications, by the device that was pushed (fetches, clear deliveries, badge rows).
INSERT INTO securepush.fetches (notification_id, device_id)
SELECT DISTINCT ON (l.notification_id) l.notification_id, l.device_id FROM securepush.delivery_log l
WHERE l.outcome = 'sent' AND hashtext(l.notification_id::text) % 5 = 0;
UPDATE securepush.notifications n SET read_at = now(), read_by_device = f.device_id
FROM securepush.fetches f WHERE f.notification_id = n.id;
-- Expired and purged ones.
INSERT INTO securepush.notifications (user_id, payload, created_at, expires_at)
SELECT 'u' || (1 + g % :users), jsonb_build_object('old', g), now() - interval '9 days', now() - interval '2 days'
FROM generate_series(1, :users) g;
UPDATE securepush.notifications SET payload = NULL, purged_at = now() WHERE expires_at < now() AND id IN (
    SELECT id FROM securepush.notifications WHERE expires_at < now() LIMIT :users / 2);
