-- A least-privilege producer role (issue 32, item 2): `securepush_producer` may enqueue (a plain INSERT into
-- securepush.notifications, securepush.enqueue, securepush.cancel) and read the delivery status of
-- notifications (securepush.notification_status, and the per-platform counts of securepush.fetch_stats), and
-- nothing else: no payload or preview once written, no
-- device row, token, secret digest or sealing key, no queue, history, settings or audit table. Operators grant
-- it to their producers' own logins (docs/operations.md#producer-logins); producers never use the schema
-- owner's login.
--
-- Until now the fan-out triggers ran with the inserting role's rights, so an enqueue-only role needed SELECT on
-- devices (every token and secret digest) and INSERT or DELETE on the queue. The functions a producer reaches
-- now run as their owner (SECURITY DEFINER) with a fixed search path that ends in pg_temp: pg_catalog, this
-- schema and pgcrypto's schema, wherever `migrate` found it. `collapse_digest` found `hmac` through
-- "$user", public, so a producer of another name could not enqueue with a collapse key and one with a schema of
-- its own name could put its own `hmac` in the digest; it is now bound to pgcrypto's schema. The functions keep
-- their bodies and their other settings (ALTER FUNCTION, no body restated).
--
-- Creating the role needs CREATEROLE once: a migrating role without it gets an error that says so; the
-- operator then creates the role (CREATE ROLE securepush_producer NOLOGIN) and migrates again.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'securepush_producer') THEN
        CREATE ROLE securepush_producer NOLOGIN;
    END IF;
EXCEPTION
    WHEN duplicate_object OR unique_violation THEN
        NULL;  -- another database of this cluster created it at the same moment
    WHEN insufficient_privilege THEN
    RAISE EXCEPTION 'migration 020 creates the role securepush_producer, which needs CREATEROLE'
        USING ERRCODE = '42501',
              HINT = 'Create it once as a role that may (CREATE ROLE securepush_producer NOLOGIN), then migrate again.';
END
$$;

-- The search path of every function that runs as its owner, and of collapse_digest.
DO $$
DECLARE
    crypto text := (SELECT n.nspname FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
                    WHERE e.extname = 'pgcrypto');
    path text := 'pg_catalog, securepush'
                 || CASE WHEN crypto IN ('pg_catalog', 'securepush') THEN '' ELSE ', ' || pg_catalog.quote_ident(crypto) END
                 || ', pg_temp';
    target text;
BEGIN
    FOREACH target IN ARRAY ARRAY[
        -- What a producer's INSERT fires, and the default it evaluates.
        'securepush.fan_out()', 'securepush.default_ttl()',
        'securepush.badge_on_update()', 'securepush.badge_on_delete()', 'securepush.schedule_clears()', 'securepush.erase_preview()',
        -- What a producer may call.
        'securepush.enqueue(text, jsonb, interval, text, integer, timestamptz, text, text, text, jsonb)',
        'securepush.cancel(uuid)', 'securepush.cancel(text, text)', 'securepush.fetch_stats(interval)'
    ] LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = %s', target, path);
    END LOOP;
    EXECUTE pg_catalog.format('ALTER FUNCTION securepush.collapse_digest(text, text) SET search_path = %s', path);
END
$$;

-- Nothing in the schema is anyone's by default: functions are executable by PUBLIC unless revoked (pgcrypto's,
-- which may live here, stay as the extension made them).
DO $$
DECLARE
    routine regprocedure;
BEGIN
    FOR routine IN
        SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
        WHERE p.pronamespace = 'securepush'::regnamespace
          AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                          WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
    LOOP
        EXECUTE pg_catalog.format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', routine);
    END LOOP;
END
$$;
ALTER DEFAULT PRIVILEGES IN SCHEMA securepush REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

GRANT USAGE ON SCHEMA securepush TO securepush_producer;
-- The columns a producer writes, and those it may read back (RETURNING id, ON CONFLICT on the idempotency key):
-- never payload or preview.
GRANT INSERT (user_id, payload, priority, idempotency_key, expires_at, deliver_at, urgency, collapse_key, category, preview)
    ON securepush.notifications TO securepush_producer;
GRANT SELECT (id, user_id, idempotency_key, priority, created_at, expires_at, read_at, deliver_at, urgency, collapse_key, category,
              cancelled_at, purged_at)
    ON securepush.notifications TO securepush_producer;
GRANT EXECUTE ON FUNCTION securepush.enqueue(text, jsonb, interval, text, integer, timestamptz, text, text, text, jsonb),
                          securepush.cancel(uuid), securepush.cancel(text, text), securepush.default_ttl(),
                          securepush.fetch_stats(interval)
    TO securepush_producer;
-- Delivery status per notification and device (the view runs as its owner; it has no payload column).
GRANT SELECT ON securepush.notification_status TO securepush_producer;
