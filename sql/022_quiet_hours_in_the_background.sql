-- Quiet hours are cheap to change (issue 32, item 3). `PUT /v1/quiet-hours` took 52 ms with nothing waiting
-- (30 ms of it a scan of pg_timezone_names, which reads the time zone files) and 1.4 s for a user with 25,000
-- waiting deliveries (each re-timed inside the request); from 8 connections its statements piled up and
-- outlived the API's deadline, and another user's reads timed out meanwhile.
--
-- 1. Zone names are looked up in `securepush.time_zones`, filled here from pg_timezone_names and refreshed by
--    every `securepush migrate` (securepush.refresh_time_zones(), for zones a newer tzdata adds).
-- 2. Changing or clearing quiet hours only records that the user's waiting deliveries need re-timing
--    (`securepush.reschedules`); every dispatcher's schedule loop re-times them in the background
--    (securepush.reschedule_pending, a few users a round, each under a per-user transaction lock so two
--    dispatchers never re-time one user at once, and a change made meanwhile is re-timed again). New
--    notifications read the quiet hours at enqueue as before, so only deliveries already waiting follow a
--    change a schedule round (one second) later.
--
-- The replaced functions keep 018's `jit = off`.

CREATE TABLE securepush.time_zones (
    name text PRIMARY KEY
);

CREATE FUNCTION securepush.refresh_time_zones() RETURNS integer
LANGUAGE sql
SET jit = off
AS $$
    WITH added AS (
        INSERT INTO securepush.time_zones (name) SELECT z.name FROM pg_catalog.pg_timezone_names z
        ON CONFLICT (name) DO NOTHING
        RETURNING 1
    )
    SELECT count(*)::integer FROM added
$$;

SELECT securepush.refresh_time_zones();

CREATE TABLE securepush.reschedules (
    user_id      text PRIMARY KEY,
    requested_at timestamptz NOT NULL DEFAULT now()
);

CREATE OR REPLACE FUNCTION securepush.set_quiet_hours(user_id text, time_zone text, starts time, ends time) RETURNS void
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_variable
BEGIN
    IF user_id IS NULL OR length(user_id) NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'user_id must be 1 to 256 characters' USING ERRCODE = '22023';
    END IF;
    IF starts IS NULL OR ends IS NULL OR starts = ends THEN
        RAISE EXCEPTION 'quiet hours need a start and a different end' USING ERRCODE = '22023';
    END IF;
    IF time_zone IS NULL OR NOT EXISTS (SELECT 1 FROM securepush.time_zones z WHERE z.name = time_zone) THEN
        RAISE EXCEPTION 'time_zone must be an IANA time zone name such as Europe/Berlin' USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.quiet_hours AS q (user_id, time_zone, starts, ends)
    VALUES (user_id, time_zone, starts, ends)
    ON CONFLICT ON CONSTRAINT quiet_hours_pkey DO UPDATE SET time_zone = EXCLUDED.time_zone, starts = EXCLUDED.starts, ends = EXCLUDED.ends,
                                        updated_at = now();
    INSERT INTO securepush.reschedules AS r (user_id) VALUES (user_id)
    ON CONFLICT ON CONSTRAINT reschedules_pkey DO UPDATE SET requested_at = now();
END
$$;

CREATE OR REPLACE FUNCTION securepush.clear_quiet_hours(user_id text) RETURNS boolean
LANGUAGE plpgsql
SET jit = off
AS $$
#variable_conflict use_variable
DECLARE
    removed boolean;
BEGIN
    DELETE FROM securepush.quiet_hours q WHERE q.user_id = user_id;
    removed := FOUND;
    IF removed THEN
        INSERT INTO securepush.reschedules AS r (user_id) VALUES (user_id)
        ON CONFLICT ON CONSTRAINT reschedules_pkey DO UPDATE SET requested_at = now();
    END IF;
    RETURN removed;
END
$$;

-- Re-times the waiting deliveries of at most `p_users` users whose quiet hours changed, oldest request first,
-- skipping users another session is re-timing; returns the deliveries moved. A request made while its user
-- is re-timed stays (its time differs) and is taken in a later round.
CREATE FUNCTION securepush.reschedule_pending(p_users integer) RETURNS integer
LANGUAGE plpgsql
SET jit = off
AS $$
DECLARE
    pending record;
    moved integer := 0;
BEGIN
    FOR pending IN
        SELECT r.user_id, r.requested_at FROM securepush.reschedules r ORDER BY r.requested_at LIMIT p_users
    LOOP
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtextextended('securepush.reschedules:' || pending.user_id, 0));
        moved := moved + securepush.reschedule_user(pending.user_id);
        DELETE FROM securepush.reschedules r WHERE r.user_id = pending.user_id AND r.requested_at = pending.requested_at;
    END LOOP;
    RETURN moved;
END
$$;

REVOKE EXECUTE ON FUNCTION securepush.refresh_time_zones(), securepush.reschedule_pending(integer) FROM PUBLIC;
