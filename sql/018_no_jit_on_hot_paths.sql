-- No statement of the enqueue, claim, completion, read or maintenance paths is JIT-compiled (issue 31).
--
-- Migrations 010-017 hold the plans of the fan-out, claim, completion, batched read and badge compaction with
-- function-level `enable_seqscan = off` (and friends), so that they stay on their indexes without statistics,
-- as after a bulk import. PostgreSQL does not forbid a method it is told to avoid: it costs it at 10^10. Two
-- statements run under those settings have no other plan: the wake-up check (`wake_dispatchers`, a scan of the
-- few rows of `securepush.dispatchers`) and the collapse digest's read of the one row of
-- `securepush.collapse_salt`. Both were costed at 10^10, far over `jit_above_cost` (100,000 by default), so
-- PostgreSQL JIT-compiled, inlined and optimised them on every execution: about 45 ms of every producer's
-- INSERT. The plan was also cached per session, so a session that had once fanned out paid it on later calls
-- of `wake_dispatchers()` too.
--
-- The fix, in two parts, with no function body restated:
--
-- 1. The two statements need no penalty: `wake_dispatchers` and `collapse_digest` scan their tiny tables with
--    the sequential scan allowed (a function's own setting applies to the statements it plans, whoever calls
--    it). An index on `dispatchers` would serve the check too, but every claim and every idle dispatcher flips
--    `awaiting_wakeup`, and an index on it would make each of those updates write the index (no HOT update)
--    for a table that fits one page.
-- 2. Defence in depth: `jit = off` on every function that turns a planner method off (a penalised node can
--    never again buy a compilation), and on every other function of these paths that runs statements: the
--    PL/pgSQL ones and the SQL ones that write (none of those is inlined, so the setting costs one GUC save
--    and restore per call). Nested calls inherit it. The STABLE SQL functions that PostgreSQL inlines into
--    their callers (default_ttl, auth_blocked_for, unread_badge, release_at, user_categories, fetch_stats) and
--    the pure computation called once per row of a fan-out (quiet_release) stay as they are.
--
-- `ops/plan-guard` (run by `ops/test`) checks the result: every nested plan of every hot path, with and
-- without statistics, must be uncompiled and cost less than `jit_above_cost`, and every function that turns a
-- planner method off must turn JIT off.

ALTER FUNCTION securepush.wake_dispatchers() SET enable_seqscan = on;
ALTER FUNCTION securepush.wake_dispatchers() SET jit = off;
ALTER FUNCTION securepush.collapse_digest(text, text) SET enable_seqscan = on;
ALTER FUNCTION securepush.collapse_digest(text, text) SET jit = off;

-- Planner settings of their own (010, 012, 014-017).
ALTER FUNCTION securepush.fan_out() SET jit = off;
ALTER FUNCTION securepush.claim_deliveries(integer, text[], bigint, uuid, uuid, boolean, integer, boolean) SET jit = off;
ALTER FUNCTION securepush.complete_deliveries(uuid, uuid[], text[], bigint[], text[], bigint[]) SET jit = off;
ALTER FUNCTION securepush.device_fetch_batch(uuid[], bytea[], text[], integer[], integer[], uuid[]) SET jit = off;
ALTER FUNCTION securepush.compact_badge_changes(text, integer) SET jit = off;

-- Enqueue and cancel.
ALTER FUNCTION securepush.enqueue(text, jsonb, interval, text, integer, timestamptz, text, text, text, jsonb) SET jit = off;
ALTER FUNCTION securepush.cancel(uuid) SET jit = off;
ALTER FUNCTION securepush.cancel(text, text) SET jit = off;
ALTER FUNCTION securepush.badge_on_update() SET jit = off;
ALTER FUNCTION securepush.badge_on_delete() SET jit = off;
ALTER FUNCTION securepush.schedule_clears() SET jit = off;

-- Reads.
ALTER FUNCTION securepush.device_check(uuid, bytea, text[]) SET jit = off;
ALTER FUNCTION securepush.device_fetch(uuid, bytea, text[], uuid[]) SET jit = off;
ALTER FUNCTION securepush.fetch_for_device(text, uuid, uuid[]) SET jit = off;
ALTER FUNCTION securepush.device_list(uuid, bytea, text[], boolean, integer, bigint, uuid, boolean) SET jit = off;
ALTER FUNCTION securepush.auth_failed(text[], integer, interval, interval, interval) SET jit = off;

-- Devices and preferences.
ALTER FUNCTION securepush.register_device(text, text, text, jsonb) SET jit = off;
ALTER FUNCTION securepush.register_device_checked(text, text, text, jsonb) SET jit = off;
ALTER FUNCTION securepush.update_device_token(uuid, text, jsonb) SET jit = off;
ALTER FUNCTION securepush.rotate_device_secret(uuid) SET jit = off;
ALTER FUNCTION securepush.rotate_device_secret(uuid, bytea, bytea) SET jit = off;
ALTER FUNCTION securepush.set_sealing_key(uuid, bytea, bytea) SET jit = off;
ALTER FUNCTION securepush.deactivate_device(uuid, text) SET jit = off;
ALTER FUNCTION securepush.cancel_pending_deliveries(uuid, text, text) SET jit = off;
ALTER FUNCTION securepush.audit(text, text, uuid, text) SET jit = off;
ALTER FUNCTION securepush.set_quiet_hours(text, text, time, time) SET jit = off;
ALTER FUNCTION securepush.clear_quiet_hours(text) SET jit = off;
ALTER FUNCTION securepush.reschedule_user(text) SET jit = off;
ALTER FUNCTION securepush.set_category_muted(text, text, boolean) SET jit = off;

-- Dispatchers and maintenance.
ALTER FUNCTION securepush.await_wakeup(uuid) SET jit = off;
ALTER FUNCTION securepush.promote_due_deliveries(integer) SET jit = off;
ALTER FUNCTION securepush.purge_payloads(interval, integer) SET jit = off;
ALTER FUNCTION securepush.retire_stale_devices(interval, integer) SET jit = off;
ALTER FUNCTION securepush.delete_retired_devices(interval, integer) SET jit = off;
ALTER FUNCTION securepush.prune_audit_log(interval) SET jit = off;
ALTER FUNCTION securepush.prune_auth_failures(interval) SET jit = off;
