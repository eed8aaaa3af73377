-- Every SQL function of the hot paths, once each, on the seeded rows (ops/plan-guard). Each step starts with
-- SELECT 'step:NAME', so the checker can tell which step a plan belongs to and that every step ran.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SELECT d.id AS dev, d.user_id AS dev_user, encode(d.secret_hash, 'hex') AS dev_hash
FROM securepush.devices d WHERE d.active AND d.platform = 'simulated' ORDER BY d.user_id DESC LIMIT 1 \gset
SELECT d.id AS other_dev FROM securepush.devices d WHERE d.active AND d.user_id <> :'dev_user' ORDER BY d.id LIMIT 1 \gset
SELECT id AS worker FROM securepush.dispatchers WHERE stopped_at IS NULL ORDER BY id LIMIT 1 \gset
SELECT gen_random_uuid() AS lease \gset
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_analyze = on;
SET auto_explain.log_timing = off;
SET auto_explain.log_format = json;
SET client_min_messages = log;

-- Enqueue: a plain INSERT (the fan-out trigger), enqueue(), a bulk INSERT ... SELECT, each delivery control.
SELECT 'step:insert_single';
INSERT INTO securepush.notifications (user_id, payload) VALUES (:'dev_user', '{"t":"single"}');
SELECT 'step:enqueue';
SELECT securepush.enqueue(:'dev_user', '{"t":"enqueue"}', idempotency_key => 'guard-' || gen_random_uuid());
SELECT 'step:enqueue_idempotent_repeat';
SELECT securepush.enqueue(:'dev_user', '{"t":"repeat"}', idempotency_key => 'guard-fixed');
SELECT securepush.enqueue(:'dev_user', '{"t":"repeat"}', idempotency_key => 'guard-fixed');
SELECT 'step:insert_bulk';
INSERT INTO securepush.notifications (user_id, payload) SELECT 'u' || g, '{"t":"bulk"}' FROM generate_series(1, 500) g;
SELECT 'step:enqueue_scheduled';
SELECT securepush.enqueue(:'dev_user', '{"t":"later"}', deliver_at => now() + interval '1 hour');
SELECT 'step:enqueue_quiet_hours';
SELECT securepush.enqueue(q.user_id, '{"t":"quiet"}', urgency => 'passive') FROM securepush.quiet_hours q ORDER BY q.user_id LIMIT 1;
SELECT 'step:enqueue_time_sensitive';
SELECT securepush.enqueue(q.user_id, '{"t":"urgent"}', urgency => 'time_sensitive') FROM securepush.quiet_hours q ORDER BY q.user_id LIMIT 1;
SELECT 'step:enqueue_collapse';
SELECT securepush.enqueue(:'dev_user', '{"t":"collapse"}', collapse_key => 'thread-1');
SELECT 'step:insert_bulk_collapse';
INSERT INTO securepush.notifications (user_id, payload, collapse_key)
SELECT 'u' || (g % 50 + 1), '{"t":"bulk-collapse"}', 'thread-' || (g % 3) FROM generate_series(1, 300) g;
SELECT 'step:enqueue_muted_category';
SELECT securepush.enqueue(m.user_id, '{"t":"muted"}', category => m.category) FROM securepush.category_mutes m ORDER BY m.user_id LIMIT 1;
SELECT 'step:enqueue_preview';
SELECT securepush.enqueue(:'dev_user', '{"t":"preview"}', preview => '{"title":"hi"}');
SELECT 'step:cancel';
SELECT * FROM securepush.cancel(securepush.enqueue(:'dev_user', '{"t":"cancel me"}'));
SELECT 'step:cancel_by_key';
SELECT * FROM securepush.cancel(:'dev_user', 'guard-fixed');

-- Claim and completion (the dispatcher's statements).
SELECT 'step:await_wakeup';
SELECT securepush.await_wakeup(:'worker');
SELECT 'step:wake_dispatchers';
SELECT securepush.wake_dispatchers();
SELECT 'step:claim';
CREATE TEMP TABLE claimed AS
SELECT * FROM securepush.claim_deliveries(200, ARRAY['simulated', 'apns', 'fcm', 'webpush'], 60000, :'lease', :'worker', true, 99, true);
SELECT 'step:claim_one_platform';
-- Its own lease token: a token names one claim (since 046 its lease row's key).
SELECT count(*) FROM securepush.claim_deliveries(50, ARRAY['apns'], 60000, gen_random_uuid(), :'worker', false, 99, false);
SELECT 'step:complete';
SELECT securepush.complete_deliveries(:'lease', array_agg(id),
           array_agg((ARRAY['sent', 'retry', 'failed', 'token_invalid'])[1 + k % 4]), array_agg(1000::bigint),
           array_agg('info-' || k), array_agg(2000::bigint))
FROM (SELECT id, row_number() OVER (ORDER BY id) AS k FROM claimed) c;
-- 046's (the guard also runs on older schemas, ops/plan-guard --to 017, where it must fail on JIT, not on this).
SELECT to_regprocedure('securepush.rescue_claims(integer)') IS NOT NULL AS has_leases \gset
\if :has_leases
SELECT 'step:release';
SELECT securepush.release_deliveries(gen_random_uuid(), ARRAY(SELECT id FROM claimed LIMIT 5), 1000);
SELECT 'step:rescue_claims';
SELECT securepush.rescue_claims();
\endif
SELECT 'step:badge';
SELECT securepush.unread_badge(:'dev_user', 99);
-- 055's (absent on older schemas, as above).
SELECT to_regprocedure('securepush.unread_badges(text[], integer)') IS NOT NULL AS has_unread_badges \gset
\if :has_unread_badges
SELECT * FROM securepush.unread_badges(ARRAY[:'dev_user', 'nobody'], 99);
\endif

-- Reads (the API's statements).
SELECT 'step:device_check';
SELECT * FROM securepush.device_check(:'dev', decode(:'dev_hash', 'hex'), ARRAY['ip:127.0.0.1']);
SELECT 'step:device_check_wrong_secret';
SELECT * FROM securepush.device_check(:'dev', sha256('wrong'::bytea), ARRAY['ip:127.0.0.1']);
-- The read functions of 027 on; before it (--to 017), the ones they replaced.
-- Any signature (to_regproc is NULL for an overloaded name: since 037 there are two, and the guard took the
-- pre-027 branch at head until the contract step 042 dropped device_list).
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_proc WHERE proname = 'device_fetch_requests'
    AND pronamespace = 'securepush'::regnamespace) AS reads_027 \gset
\if :reads_027
SELECT 'step:fetch_batch';
SELECT * FROM securepush.device_fetch_requests(
    ARRAY[:'dev', :'other_dev']::uuid[], ARRAY[decode(:'dev_hash', 'hex'), sha256('x'::bytea)], ARRAY['ip:10.0.0.1', 'ip:10.0.0.2'],
    ARRAY[1, 2], ARRAY[1, 1, 2],
    ARRAY(SELECT id FROM securepush.notifications WHERE user_id = :'dev_user' ORDER BY created_at DESC LIMIT 2)
        || (SELECT id FROM securepush.notifications ORDER BY id LIMIT 1));
\else
SELECT 'step:fetch_batch';
SELECT * FROM securepush.device_fetch_batch(
    ARRAY[:'dev', :'other_dev']::uuid[], ARRAY[decode(:'dev_hash', 'hex'), sha256('x'::bytea)], ARRAY['ip:10.0.0.1', 'ip:10.0.0.2'],
    ARRAY[1, 2], ARRAY[1, 1, 2],
    ARRAY(SELECT id FROM securepush.notifications WHERE user_id = :'dev_user' ORDER BY created_at DESC LIMIT 2)
        || (SELECT id FROM securepush.notifications ORDER BY id LIMIT 1));
\endif
SELECT 'step:fetch_single';
SELECT * FROM securepush.device_fetch(:'dev', decode(:'dev_hash', 'hex'), ARRAY['ip:127.0.0.1'],
    ARRAY(SELECT id FROM securepush.notifications WHERE user_id = :'dev_user' ORDER BY created_at LIMIT 3));
\if :reads_027
SELECT 'step:list_unread';
SELECT count(*) FROM securepush.device_list_page(:'dev', decode(:'dev_hash', 'hex'), ARRAY['ip:127.0.0.1'], true, 50, NULL, NULL, false);
SELECT 'step:list_payloads_after_cursor';
SELECT count(*) FROM securepush.device_list_page(:'dev', decode(:'dev_hash', 'hex'), ARRAY['ip:127.0.0.1'], false, 20,
    (extract(epoch FROM now()) * 1000000)::bigint, gen_random_uuid(), true);
\else
SELECT 'step:list_unread';
SELECT count(*) FROM securepush.device_list(:'dev', decode(:'dev_hash', 'hex'), ARRAY['ip:127.0.0.1'], true, 50, NULL, NULL, false);
SELECT 'step:list_payloads_after_cursor';
SELECT count(*) FROM securepush.device_list(:'dev', decode(:'dev_hash', 'hex'), ARRAY['ip:127.0.0.1'], false, 20,
    (extract(epoch FROM now()) * 1000000)::bigint, gen_random_uuid(), true);
\endif
SELECT 'step:read_sync';
UPDATE securepush.notifications n SET read_at = now()
WHERE n.id IN (SELECT l.notification_id FROM securepush.delivery_log l JOIN securepush.notifications m ON m.id = l.notification_id
               WHERE l.outcome = 'sent' AND m.read_at IS NULL ORDER BY l.notification_id LIMIT 5);
SELECT 'step:auth_failed';
SELECT securepush.auth_failed(ARRAY['ip:192.0.2.1', 'device:' || :'dev'], 5, interval '1 second', interval '1 minute', interval '10 minutes');
SELECT 'step:categories';
SELECT count(*) FROM securepush.user_categories(:'dev_user');

-- Preferences and devices (the API's writes).
SELECT 'step:set_quiet_hours';
SELECT securepush.set_quiet_hours(:'dev_user', 'Europe/Berlin', '23:00', '06:00');
-- (022's: the guard also runs on older schemas, ops/plan-guard --to 017, where it must fail on JIT, not on this.)
SELECT to_regprocedure('securepush.reschedule_pending(integer)') IS NOT NULL AS has_reschedule \gset
\if :has_reschedule
SELECT 'step:reschedule_pending';
SELECT securepush.reschedule_pending(5);
\endif
SELECT 'step:clear_quiet_hours';
SELECT securepush.clear_quiet_hours(:'dev_user');
SELECT 'step:mute_category';
SELECT securepush.set_category_muted(:'dev_user', 'chat', true);
SELECT securepush.set_category_muted(:'dev_user', 'chat', false);
SELECT 'step:register';
SELECT count(*) FROM securepush.register_device_checked('guard-user', 'simulated', 'guard-token-' || gen_random_uuid(), '{}');
SELECT 'step:update_token';
SELECT count(*) FROM securepush.update_device_token(:'dev', 'sim-moved-' || gen_random_uuid());
SELECT 'step:sealing_key';
SELECT securepush.set_sealing_key(:'dev', '\x04'::bytea || sha256('a'::bytea) || sha256('b'::bytea), substring(sha256('c'::bytea) FROM 1 FOR 16));
SELECT 'step:rotate';
SELECT count(*) FROM securepush.rotate_device_secret(:'other_dev', NULL, NULL);
SELECT 'step:deactivate';
SELECT securepush.deactivate_device(:'other_dev', 'unregistered');

-- Maintenance (the dispatcher's periodic statements).
SELECT 'step:promote_due';
UPDATE securepush.deliveries SET run_at = now() - interval '1 second'
WHERE id IN (SELECT id FROM securepush.deliveries WHERE state = 'scheduled' ORDER BY id LIMIT 20);
SELECT securepush.promote_due_deliveries(10000);
SELECT 'step:compact_badges';
SELECT securepush.compact_badge_changes(NULL, 100);
SELECT 'step:purge_payloads';
SELECT securepush.purge_payloads(interval '1 day', 1000);
SELECT 'step:retire_stale';
SELECT securepush.retire_stale_devices(interval '100 days', 10);
SELECT 'step:delete_retired';
SELECT securepush.delete_retired_devices(interval '300 days', 100);
SELECT 'step:prune_audit';
SELECT securepush.prune_audit_log(interval '60 days');
SELECT 'step:prune_throttles';
SELECT securepush.prune_auth_failures(interval '1 day');
SELECT 'step:fetch_stats';
SELECT count(*) FROM securepush.fetch_stats(interval '1 hour');
SELECT 'step:done';
