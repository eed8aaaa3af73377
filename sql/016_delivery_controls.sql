-- Delivery controls: when a notification is pushed (deliver_at, quiet hours, cancel), how it interrupts
-- (urgency), what it replaces (collapse_key) and whether the user wants it (category mutes), and a push
-- address a device can replace with its own credential.
--
-- What reaches a push platform stays the id and fixed words: the urgency word and an opaque per-user
-- digest of the collapse key. Producer text, category names and collapse keys stay in this database.
--
-- Scheduling: a delivery whose time has not come (deliver_at, or the end of the user's quiet window) is
-- inserted as 'scheduled', outside the claim index, so a million future pushes cost the claim nothing.
-- securepush.promote_due_deliveries(), run by every dispatcher about once a second, makes due rows
-- 'pending' and wakes the dispatchers.

-- Read by fan_out: critical urgency is refused unless the deployment enables it (SECUREPUSH_CRITICAL_URGENCY).
INSERT INTO securepush.settings (key, value) VALUES ('critical_urgency', 'off') ON CONFLICT (key) DO NOTHING;

-- The key of collapse digests: random per database, never leaves it, never shown by /status.
CREATE TABLE securepush.collapse_salt (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    salt bytea NOT NULL DEFAULT gen_random_bytes(32)
);
INSERT INTO securepush.collapse_salt DEFAULT VALUES;

ALTER TABLE securepush.notifications
    ADD COLUMN deliver_at timestamptz,
    ADD COLUMN urgency text NOT NULL DEFAULT 'active',
    ADD COLUMN collapse_key text,
    ADD COLUMN category text,
    ADD COLUMN cancelled_at timestamptz,
    ADD CONSTRAINT notifications_urgency_valid CHECK (urgency IN ('passive', 'active', 'time_sensitive', 'critical')),
    ADD CONSTRAINT notifications_collapse_key_valid CHECK (length(collapse_key) BETWEEN 1 AND 256),
    ADD CONSTRAINT notifications_category_valid CHECK (category ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
    ADD CONSTRAINT notifications_expires_after_delivery CHECK (deliver_at IS NULL OR expires_at > deliver_at);

CREATE INDEX notifications_scheduled_idx ON securepush.notifications (deliver_at)
    WHERE deliver_at IS NOT NULL AND purged_at IS NULL;
CREATE INDEX notifications_collapse_idx ON securepush.notifications (user_id, collapse_key)
    WHERE collapse_key IS NOT NULL;
CREATE INDEX notifications_category_idx ON securepush.notifications (user_id, category)
    WHERE category IS NOT NULL;

ALTER TABLE securepush.deliveries
    ADD COLUMN urgency text NOT NULL DEFAULT 'active',
    ADD COLUMN collapse_id text,
    DROP CONSTRAINT deliveries_state_valid,
    ADD CONSTRAINT deliveries_state_valid CHECK (state IN ('scheduled', 'pending', 'claimed'));
CREATE INDEX deliveries_scheduled_idx ON securepush.deliveries (run_at) WHERE state = 'scheduled';

ALTER TABLE securepush.delivery_log
    DROP CONSTRAINT delivery_log_outcome_valid,
    ADD CONSTRAINT delivery_log_outcome_valid
        CHECK (outcome IN ('sent', 'failed', 'token_invalid', 'cancelled', 'expired', 'superseded'));

ALTER TABLE securepush.audit_log DROP CONSTRAINT audit_log_event_valid;
ALTER TABLE securepush.audit_log ADD CONSTRAINT audit_log_event_valid CHECK (event IN (
    'device_registered', 'device_rotated', 'device_revoked', 'device_retired', 'throttled', 'token_invalid',
    'device_rebound', 'registration_limited', 'device_deleted', 'device_token_updated'));

CREATE INDEX audit_log_token_updates_idx ON securepush.audit_log (user_id, at) WHERE event = 'device_token_updated';

-- A user's daily quiet window in an IANA time zone: [starts, ends) local time, spanning midnight when
-- starts > ends.
CREATE TABLE securepush.quiet_hours (
    user_id text PRIMARY KEY CHECK (length(user_id) BETWEEN 1 AND 256),
    time_zone text NOT NULL,
    starts time NOT NULL,
    ends time NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT quiet_hours_window_not_empty CHECK (starts <> ends)
);

-- Categories a user muted: their notifications are stored and listable, never pushed.
CREATE TABLE securepush.category_mutes (
    user_id text NOT NULL,
    category text NOT NULL CHECK (category ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
    muted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, category)
);

-- The first instant at or after p_at whose wall clock in p_zone is outside [p_starts, p_ends).
-- The window ends when the wall clock first reads p_ends or later: on a day whose DST gap swallows p_ends
-- (02:30 on a spring-forward night) that is the transition itself; on a fall-back night that repeats
-- p_ends, its first occurrence.
CREATE FUNCTION securepush.quiet_release(p_zone text, p_starts time, p_ends time, p_at timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    wall timestamp := p_at AT TIME ZONE p_zone;
    clock time := wall::time;
    end_wall timestamp;
    before_offset interval;
    after_offset interval;
    low timestamptz;
    high timestamptz;
    middle timestamptz;
BEGIN
    IF p_starts = p_ends THEN
        RETURN p_at;
    ELSIF p_starts < p_ends THEN
        IF clock < p_starts OR clock >= p_ends THEN
            RETURN p_at;
        END IF;
        end_wall := wall::date + p_ends;
    ELSE
        IF clock < p_starts AND clock >= p_ends THEN
            RETURN p_at;
        END IF;
        end_wall := CASE WHEN clock >= p_starts THEN wall::date + 1 ELSE wall::date END + p_ends;
    END IF;
    -- The two readings of end_wall: with the UTC offset in force a day before it and a day after it.
    before_offset := ((end_wall - interval '1 day') AT TIME ZONE 'UTC') AT TIME ZONE p_zone - (end_wall - interval '1 day');
    after_offset := ((end_wall + interval '1 day') AT TIME ZONE 'UTC') AT TIME ZONE p_zone - (end_wall + interval '1 day');
    low := (end_wall - before_offset) AT TIME ZONE 'UTC';
    high := (end_wall - after_offset) AT TIME ZONE 'UTC';
    IF (low AT TIME ZONE p_zone) = end_wall AND (high AT TIME ZONE p_zone) = end_wall THEN
        RETURN greatest(least(low, high), p_at);
    ELSIF (low AT TIME ZONE p_zone) = end_wall THEN
        RETURN greatest(low, p_at);
    ELSIF (high AT TIME ZONE p_zone) = end_wall THEN
        RETURN greatest(high, p_at);
    END IF;
    -- end_wall does not exist (a gap): the answer is the transition, the first instant whose wall clock
    -- is past end_wall. It lies between the two readings; bisect to the microsecond.
    low := least((end_wall - before_offset) AT TIME ZONE 'UTC', (end_wall - after_offset) AT TIME ZONE 'UTC');
    high := greatest((end_wall - before_offset) AT TIME ZONE 'UTC', (end_wall - after_offset) AT TIME ZONE 'UTC');
    WHILE high - low > interval '1 microsecond' LOOP
        middle := low + (high - low) / 2;
        IF (middle AT TIME ZONE p_zone) >= end_wall THEN
            high := middle;
        ELSE
            low := middle;
        END IF;
    END LOOP;
    -- A gap of a day or more (Samoa skipped 30 December 2011) can land the clock inside the next night's
    -- window: go on from there.
    RETURN securepush.quiet_release(p_zone, p_starts, p_ends, greatest(high, p_at));
END
$$;

-- When a notification of p_urgency meant for p_at may be pushed to p_user: the end of the user's quiet
-- window, or p_at itself (no quiet hours, outside them, or time-sensitive and critical notifications).
CREATE FUNCTION securepush.release_at(p_user text, p_at timestamptz, p_urgency text)
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT securepush.quiet_release(q.time_zone, q.starts, q.ends, p_at)
         FROM securepush.quiet_hours q
         WHERE q.user_id = p_user AND p_urgency NOT IN ('time_sensitive', 'critical')),
        p_at)
$$;

-- The opaque per-user digest of a collapse key that travels as apns-collapse-id, FCM collapse_key and
-- the Web Push Topic: 32 hex digits of HMAC-SHA-256 under this database's salt, so a platform can neither
-- read the key nor match one user's key with another's.
-- pgcrypto's hmac is found through the search path the migration ran with (pgcrypto lands in the migrating
-- role's schema or in public), not the producer's.
CREATE FUNCTION securepush.collapse_digest(p_user text, p_key text)
RETURNS text
LANGUAGE sql STABLE
SET search_path FROM CURRENT
AS $$
    SELECT left(encode(hmac(convert_to(p_user || chr(31) || p_key, 'UTF8'), s.salt, 'sha256'), 'hex'), 32)
    FROM securepush.collapse_salt s
$$;

-- A notification counts towards the badge while unread, unpurged and unexpired, from its deliver_at.
CREATE OR REPLACE FUNCTION securepush.badge_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO securepush.badge_changes (user_id, change, effective_at)
    SELECT user_id, sum(change), effective_at
    FROM (
        SELECT o.user_id, -1 AS change, coalesce(o.deliver_at, '-infinity'::timestamptz) AS effective_at
        FROM old_rows o WHERE o.read_at IS NULL AND o.purged_at IS NULL AND o.expires_at > now()
        UNION ALL
        SELECT o.user_id, 1, o.expires_at
        FROM old_rows o WHERE o.read_at IS NULL AND o.purged_at IS NULL AND o.expires_at > now()
    ) c
    GROUP BY user_id, effective_at
    HAVING sum(change) <> 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION securepush.badge_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO securepush.badge_changes (user_id, change, effective_at)
    SELECT user_id, sum(change), effective_at
    FROM (
        SELECT o.user_id, -1 AS change, coalesce(o.deliver_at, '-infinity'::timestamptz) AS effective_at
        FROM old_rows o WHERE o.read_at IS NULL AND o.purged_at IS NULL AND o.expires_at > now()
        UNION ALL
        SELECT o.user_id, 1, o.expires_at
        FROM old_rows o WHERE o.read_at IS NULL AND o.purged_at IS NULL AND o.expires_at > now()
        UNION ALL
        SELECT n.user_id, 1, coalesce(n.deliver_at, '-infinity'::timestamptz)
        FROM new_rows n WHERE n.read_at IS NULL AND n.purged_at IS NULL AND n.expires_at > now()
        UNION ALL
        SELECT n.user_id, -1, n.expires_at
        FROM new_rows n WHERE n.read_at IS NULL AND n.purged_at IS NULL AND n.expires_at > now()
    ) c
    GROUP BY user_id, effective_at
    HAVING sum(change) <> 0;
    RETURN NULL;
END
$$;

-- Fan-out with the controls: critical refused unless enabled; muted categories get no deliveries; a
-- notification with a collapse key supersedes the user's older ones still waiting (and, within one
-- statement, the one with the latest deliver_at, then id, wins); each delivery waits for deliver_at and
-- the user's quiet window ('scheduled') or is due at once ('pending').
-- Its plans must not depend on statistics: a broadcast often runs right after a bulk device import, before
-- any ANALYZE, and a nested loop over a sequential scan of devices took 71 s for 20,000 notifications (1.4 s
-- with the index). Without sequential scans, each notification finds its user's devices by index.
CREATE OR REPLACE FUNCTION securepush.fan_out() RETURNS trigger
LANGUAGE plpgsql
SET enable_seqscan = off
AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM new_notifications n WHERE n.urgency = 'critical')
       AND coalesce((SELECT value FROM securepush.settings WHERE key = 'critical_urgency'), 'off') <> 'on' THEN
        RAISE EXCEPTION 'urgency critical is not enabled in this deployment (SECUREPUSH_CRITICAL_URGENCY=on)'
            USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.badge_changes (user_id, change, effective_at)
    SELECT user_id, sum(change), effective_at
    FROM (
        SELECT n.user_id, 1 AS change, coalesce(n.deliver_at, '-infinity'::timestamptz) AS effective_at
        FROM new_notifications n WHERE n.read_at IS NULL AND n.purged_at IS NULL AND n.expires_at > now()
        UNION ALL
        SELECT n.user_id, -1, n.expires_at
        FROM new_notifications n WHERE n.read_at IS NULL AND n.purged_at IS NULL AND n.expires_at > now()
    ) c
    GROUP BY user_id, effective_at
    HAVING sum(change) <> 0;
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
    WITH wanted AS (
        SELECT n.id, n.user_id, n.priority, n.expires_at, n.urgency,
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
    INSERT INTO securepush.deliveries (notification_id, device_id, platform, priority, expires_at, urgency, collapse_id, run_at, state)
    SELECT w.id, d.id, d.platform, w.priority, w.expires_at, w.urgency, w.collapse_id, w.run_at,
           CASE WHEN w.run_at > now() THEN 'scheduled' ELSE 'pending' END
    FROM wanted w
    JOIN securepush.devices d ON d.user_id = w.user_id AND d.active
    WHERE w.run_at < w.expires_at;
    -- Woken also when all of them were scheduled: a claim that finds nothing is cheaper than telling them apart.
    IF FOUND THEN
        PERFORM securepush.wake_dispatchers();
    END IF;
    RETURN NULL;
END
$$;

-- Makes due scheduled deliveries claimable and wakes the dispatchers; returns how many it promoted.
CREATE FUNCTION securepush.promote_due_deliveries(batch integer DEFAULT 10000) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    promoted integer;
BEGIN
    UPDATE securepush.deliveries d SET state = 'pending'
    WHERE d.id = ANY (ARRAY(
        SELECT s.id FROM securepush.deliveries s
        WHERE s.state = 'scheduled' AND s.run_at <= now()
        ORDER BY s.run_at
        LIMIT batch
        FOR UPDATE SKIP LOCKED
    ));
    GET DIAGNOSTICS promoted = ROW_COUNT;
    IF promoted > 0 THEN
        PERFORM securepush.wake_dispatchers();
    END IF;
    RETURN promoted;
END
$$;

-- 001's cancel, for scheduled deliveries too.
CREATE OR REPLACE FUNCTION securepush.cancel_pending_deliveries(target_device uuid, reason text, keep_user text DEFAULT NULL)
RETURNS integer
LANGUAGE sql AS $$
    WITH gone AS (
        DELETE FROM securepush.deliveries dl
        USING securepush.notifications n
        WHERE dl.device_id = target_device AND dl.state IN ('scheduled', 'pending') AND n.id = dl.notification_id
          AND (keep_user IS NULL OR n.user_id <> keep_user)
        RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at, dl.kind
    ),
    logged AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error, created_at, kind)
        SELECT id, notification_id, device_id, platform, 'cancelled', attempts, reason, created_at, kind FROM gone
        RETURNING 1
    )
    SELECT count(*)::integer FROM logged
$$;

-- Re-times a user's waiting first attempts after their quiet hours changed.
CREATE FUNCTION securepush.reschedule_user(p_user text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    moved integer;
    due boolean;
BEGIN
    WITH retimed AS (
        SELECT d.id, securepush.release_at(p_user, greatest(coalesce(n.deliver_at, now()), now()), d.urgency) AS run_at
        FROM securepush.deliveries d
        JOIN securepush.notifications n ON n.id = d.notification_id
        WHERE n.user_id = p_user AND d.kind = 'notify' AND d.attempts = 0 AND d.state IN ('scheduled', 'pending')
    ),
    updated AS (
        UPDATE securepush.deliveries d
        SET run_at = r.run_at, state = CASE WHEN r.run_at > now() THEN 'scheduled' ELSE 'pending' END
        FROM retimed r
        WHERE d.id = r.id AND d.state IN ('scheduled', 'pending')
        RETURNING d.state
    )
    SELECT count(*), bool_or(state = 'pending') INTO moved, due FROM updated;
    IF due THEN
        PERFORM securepush.wake_dispatchers();
    END IF;
    RETURN moved;
END
$$;

-- Sets a user's quiet hours (an IANA zone such as Europe/Berlin, and local start and end times).
CREATE FUNCTION securepush.set_quiet_hours(user_id text, time_zone text, starts time, ends time) RETURNS void
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
BEGIN
    IF user_id IS NULL OR length(user_id) NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'user_id must be 1 to 256 characters' USING ERRCODE = '22023';
    END IF;
    IF starts IS NULL OR ends IS NULL OR starts = ends THEN
        RAISE EXCEPTION 'quiet hours need a start and a different end' USING ERRCODE = '22023';
    END IF;
    IF time_zone IS NULL OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_timezone_names z WHERE z.name = time_zone) THEN
        RAISE EXCEPTION 'time_zone must be an IANA time zone name such as Europe/Berlin' USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.quiet_hours AS q (user_id, time_zone, starts, ends)
    VALUES (user_id, time_zone, starts, ends)
    ON CONFLICT ON CONSTRAINT quiet_hours_pkey DO UPDATE SET time_zone = EXCLUDED.time_zone, starts = EXCLUDED.starts, ends = EXCLUDED.ends,
                                        updated_at = now();
    PERFORM securepush.reschedule_user(user_id);
END
$$;

-- Removes a user's quiet hours; what they held back becomes due.
CREATE FUNCTION securepush.clear_quiet_hours(user_id text) RETURNS boolean
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    removed boolean;
BEGIN
    DELETE FROM securepush.quiet_hours q WHERE q.user_id = user_id;
    removed := FOUND;
    IF removed THEN
        PERFORM securepush.reschedule_user(user_id);
    END IF;
    RETURN removed;
END
$$;

-- Mutes or unmutes a category for a user. Muting cancels the category's deliveries still waiting.
CREATE FUNCTION securepush.set_category_muted(user_id text, category text, muted boolean) RETURNS integer
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    cancelled integer := 0;
BEGIN
    IF category IS NULL OR category !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' THEN
        RAISE EXCEPTION 'a category is 1 to 64 letters, digits, . _ - (starting with a letter or digit)' USING ERRCODE = '22023';
    END IF;
    IF NOT muted THEN
        DELETE FROM securepush.category_mutes m WHERE m.user_id = user_id AND m.category = category;
        RETURN 0;
    END IF;
    INSERT INTO securepush.category_mutes (user_id, category) VALUES (user_id, category) ON CONFLICT DO NOTHING;
    WITH gone AS (
        DELETE FROM securepush.deliveries dl
        USING securepush.notifications n
        WHERE n.user_id = user_id AND n.category = category AND dl.notification_id = n.id
          AND dl.kind = 'notify' AND dl.state IN ('scheduled', 'pending')
        RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at
    ),
    logged AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error, created_at, kind)
        SELECT g.id, g.notification_id, g.device_id, g.platform, 'cancelled', g.attempts, 'category muted', g.created_at, 'notify'
        FROM gone g
        RETURNING 1
    )
    SELECT count(*) INTO cancelled FROM logged;
    RETURN cancelled;
END
$$;

-- The categories a user has (in live notifications) or muted, and whether each is muted.
CREATE FUNCTION securepush.user_categories(p_user text)
RETURNS TABLE(category text, muted boolean, latest_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT c.category, bool_or(c.muted), max(c.latest_at)
    FROM (
        SELECT n.category, false AS muted, max(coalesce(n.deliver_at, n.created_at)) AS latest_at
        FROM securepush.notifications n
        WHERE n.user_id = p_user AND n.category IS NOT NULL AND n.expires_at > now() AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
        GROUP BY n.category
        UNION ALL
        SELECT m.category, true, NULL::timestamptz FROM securepush.category_mutes m WHERE m.user_id = p_user
    ) c
    GROUP BY c.category
    ORDER BY c.category
$$;

-- Cancels a notification: its waiting deliveries are cancelled and logged, its payload purged. Pushes
-- already with a platform (in_flight) cannot be recalled; a device that fetches afterwards is told the
-- notification is gone. No row for an unknown id.
CREATE FUNCTION securepush.cancel(notification_id uuid)
RETURNS TABLE(id uuid, cancelled_deliveries integer, in_flight integer, already_pushed integer, payload_purged boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    target uuid := notification_id;
    purged boolean;
BEGIN
    PERFORM 1 FROM securepush.notifications n WHERE n.id = target FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    UPDATE securepush.notifications n SET payload = NULL, purged_at = now(), cancelled_at = now()
    WHERE n.id = target AND n.purged_at IS NULL;
    purged := FOUND;
    RETURN QUERY
    WITH gone AS (
        DELETE FROM securepush.deliveries dl
        WHERE dl.notification_id = target AND dl.kind = 'notify' AND dl.state IN ('scheduled', 'pending')
        RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at
    ),
    logged AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error, created_at, kind)
        SELECT g.id, g.notification_id, g.device_id, g.platform, 'cancelled', g.attempts, 'cancelled by the producer', g.created_at, 'notify'
        FROM gone g
        RETURNING 1
    )
    SELECT target,
           (SELECT count(*)::integer FROM logged),
           (SELECT count(*)::integer FROM securepush.deliveries d WHERE d.notification_id = target AND d.kind = 'notify' AND d.state = 'claimed'),
           (SELECT count(*)::integer FROM securepush.delivery_log l WHERE l.notification_id = target AND l.kind = 'notify' AND l.outcome = 'sent'),
           purged;
END
$$;

-- Cancels by the producer's idempotency key.
CREATE FUNCTION securepush.cancel(user_id text, idempotency_key text)
RETURNS TABLE(id uuid, cancelled_deliveries integer, in_flight integer, already_pushed integer, payload_purged boolean)
LANGUAGE sql AS $$
    SELECT c.* FROM securepush.notifications n, securepush.cancel(n.id) c
    WHERE n.user_id = cancel.user_id AND n.idempotency_key = cancel.idempotency_key
$$;

-- enqueue with the controls. ttl counts from deliver_at when one is given.
DROP FUNCTION securepush.enqueue(text, jsonb, interval, text, integer);
CREATE FUNCTION securepush.enqueue(
    user_id text, payload jsonb, ttl interval DEFAULT NULL, idempotency_key text DEFAULT NULL, priority integer DEFAULT 0,
    deliver_at timestamptz DEFAULT NULL, urgency text DEFAULT 'active', collapse_key text DEFAULT NULL,
    category text DEFAULT NULL
) RETURNS uuid
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    new_id uuid;
BEGIN
    IF user_id IS NULL OR payload IS NULL THEN
        RAISE EXCEPTION 'securepush.enqueue: user_id and payload are required' USING ERRCODE = '22004';
    END IF;
    IF ttl IS NOT NULL AND ttl <= interval '0' THEN
        RAISE EXCEPTION 'securepush.enqueue: ttl must be positive' USING ERRCODE = '22023';
    END IF;
    IF urgency IS NULL OR urgency NOT IN ('passive', 'active', 'time_sensitive', 'critical') THEN
        RAISE EXCEPTION 'securepush.enqueue: urgency must be passive, active, time_sensitive or critical' USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.notifications AS n
        (user_id, payload, priority, idempotency_key, expires_at, deliver_at, urgency, collapse_key, category)
    VALUES (user_id, payload, priority, idempotency_key,
            coalesce(deliver_at, now()) + coalesce(ttl, securepush.default_ttl()), deliver_at, urgency, collapse_key, category)
    ON CONFLICT ON CONSTRAINT notifications_idempotency_unique DO NOTHING
    RETURNING n.id INTO new_id;
    IF new_id IS NULL THEN
        SELECT n.id INTO new_id FROM securepush.notifications n
        WHERE n.user_id = enqueue.user_id AND n.idempotency_key = enqueue.idempotency_key;
    END IF;
    RETURN new_id;
END
$$;

-- A device replaces its own push address (token or Web Push subscription and keys). Another device that
-- holds the new address is retired, as registration re-binds a token; the caller's waiting deliveries go
-- to the new address. Returns the user the address was taken from, if another; no row when the device is
-- not active.
CREATE FUNCTION securepush.update_device_token(target_device uuid, token text, options jsonb DEFAULT NULL)
RETURNS TABLE(device_id uuid, rebound_from text)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    me record;
    holder record;
    rate integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_registrations_per_hour'), 60);
    recent integer;
    oldest timestamptz;
BEGIN
    SELECT d.id, d.user_id, d.platform, d.options INTO me FROM securepush.devices d
    WHERE d.id = target_device AND d.active FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- Registration's hourly rate bounds address changes too: a leaked credential cannot cycle through tokens
    -- retiring other devices.
    PERFORM pg_advisory_xact_lock(hashtextextended('securepush.devices:' || me.user_id, 0));
    SELECT count(*), min(a.at) INTO recent, oldest FROM securepush.audit_log a
    WHERE a.event = 'device_token_updated' AND a.user_id = me.user_id AND a.at > now() - interval '1 hour';
    IF rate > 0 AND recent >= rate THEN
        RAISE EXCEPTION 'too many push address changes for this user'
            USING ERRCODE = 'SPR01', DETAIL = greatest(1, ceil(extract(epoch FROM oldest + interval '1 hour' - now())))::integer::text;
    END IF;
    PERFORM securepush.validate_device(me.platform, token, coalesce(options, me.options));
    SELECT d.id, d.user_id, d.active INTO holder FROM securepush.devices d
    WHERE d.platform = me.platform AND d.token = update_device_token.token AND d.id <> me.id
    FOR UPDATE;
    IF FOUND THEN
        PERFORM securepush.deactivate_device(holder.id, 'token moved to another device');
        UPDATE securepush.devices d SET token = 'moved:' || d.id::text WHERE d.id = holder.id;
        IF holder.active THEN
            PERFORM securepush.audit('device_retired', holder.user_id, holder.id, 'token moved to another device');
        END IF;
        IF holder.user_id <> me.user_id THEN
            INSERT INTO securepush.audit_log (event, user_id, device_id, reason, previous_user_id, previous_device_id)
            VALUES ('device_rebound', me.user_id, me.id, me.platform, holder.user_id, holder.id);
            rebound_from := holder.user_id;
        END IF;
    END IF;
    UPDATE securepush.devices d
    SET token = update_device_token.token, options = coalesce(update_device_token.options, d.options), updated_at = now(),
        last_seen_at = now()
    WHERE d.id = me.id;
    PERFORM securepush.audit('device_token_updated', me.user_id, me.id, me.platform);
    device_id := me.id;
    RETURN NEXT;
END
$$;

-- Claims return the urgency and the collapse digest.
DROP FUNCTION securepush.claim_deliveries(integer, text[], bigint, uuid, uuid, boolean, integer);
CREATE FUNCTION securepush.claim_deliveries(p_limit integer, p_platforms text[], p_lease_ms bigint, p_token uuid, p_worker uuid,
                                            p_badge boolean, p_badge_limit integer)
RETURNS TABLE(id uuid, notification_id uuid, device_id uuid, platform text, token text, options text, active boolean,
              expires_at timestamptz, priority smallint, attempts integer, unread bigint, clear_ids uuid[], urgency text,
              collapse_id text)
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
#variable_conflict use_column
DECLARE
    claimed_rows integer;
BEGIN
    RETURN QUERY
    WITH c AS MATERIALIZED (
        SELECT d.id FROM securepush.deliveries d
        WHERE d.state = 'pending' AND d.run_at <= now() AND d.platform = ANY(p_platforms)
        ORDER BY d.priority DESC, d.run_at, d.id
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    ),
    claimed AS (
        UPDATE securepush.deliveries d
        SET state = 'claimed', attempts = d.attempts + 1, lease_token = p_token, claimed_at = now(),
            lease_expires_at = now() + p_lease_ms * interval '1 millisecond', claimed_by = p_worker
        FROM c, securepush.devices dev
        WHERE d.id = c.id AND dev.id = d.device_id
        RETURNING d.id, d.notification_id, d.device_id, d.platform, dev.token, dev.options::text AS options, dev.active,
                  d.expires_at, d.priority, d.attempts, dev.user_id, d.clear_ids, d.urgency, d.collapse_id
    ),
    badges AS MATERIALIZED (
        SELECT jsonb_object_agg(u.user_id, securepush.unread_badge(u.user_id, p_badge_limit)) AS counts
        FROM (SELECT DISTINCT claimed.user_id FROM claimed) u
        WHERE p_badge
    )
    SELECT claimed.id, claimed.notification_id, claimed.device_id, claimed.platform, claimed.token, claimed.options,
           claimed.active, claimed.expires_at, claimed.priority, claimed.attempts,
           ((SELECT b.counts FROM badges b) ->> claimed.user_id)::bigint,
           claimed.clear_ids, claimed.urgency, claimed.collapse_id
    FROM claimed;
    GET DIAGNOSTICS claimed_rows = ROW_COUNT;
    IF claimed_rows > 0 THEN
        UPDATE securepush.dispatchers d SET awaiting_wakeup = false WHERE d.id = p_worker AND d.awaiting_wakeup;
    END IF;
END
$$;

-- The read functions: a notification before its deliver_at does not exist for a device (404, like one
-- of another user's), and reads return the category.
DROP FUNCTION securepush.device_fetch(uuid, bytea, text[], uuid[]);
DROP FUNCTION securepush.device_list(uuid, bytea, text[], boolean, integer, bigint, uuid, boolean);
DROP FUNCTION securepush.fetch_for_device(text, uuid, uuid[]);
DROP FUNCTION securepush.device_fetch_batch(uuid[], bytea[], text[], integer[], integer[], uuid[]);

CREATE FUNCTION securepush.fetch_for_device(p_user text, p_device uuid, p_ids uuid[])
RETURNS TABLE(id uuid, owned boolean, live boolean, payload text, created_at timestamptz, read_at timestamptz, category text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH marked AS (
        UPDATE securepush.notifications n
        SET read_at = coalesce(n.read_at, now()), read_by_device = coalesce(n.read_by_device, p_device)
        WHERE n.id = ANY(p_ids) AND n.user_id = p_user AND n.expires_at > now() AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
        RETURNING n.id, n.payload::text AS payload, n.created_at, n.read_at, n.category
    ),
    fetched AS (
        INSERT INTO securepush.fetches (notification_id, device_id)
        SELECT m.id, p_device FROM marked m
        ON CONFLICT (notification_id, device_id) DO NOTHING
    ),
    dead AS (
        SELECT n.id FROM securepush.notifications n
        WHERE n.id = ANY(p_ids) AND n.user_id = p_user AND NOT (n.expires_at > now() AND n.purged_at IS NULL)
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
    )
    SELECT w.id, m.id IS NOT NULL OR d.id IS NOT NULL, m.id IS NOT NULL, m.payload, m.created_at, m.read_at, m.category
    FROM unnest(p_ids) WITH ORDINALITY AS w(id, ord)
    LEFT JOIN marked m ON m.id = w.id
    LEFT JOIN dead d ON d.id = w.id
    ORDER BY w.ord;
END
$$;

CREATE FUNCTION securepush.device_fetch(p_device uuid, p_secret_hash bytea, p_throttle_keys text[], p_ids uuid[])
RETURNS TABLE(user_id text, blocked_for double precision, id uuid, owned boolean, live boolean, payload text,
              created_at timestamptz, read_at timestamptz, category text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    auth record;
BEGIN
    SELECT c.user_id, c.blocked_for INTO auth FROM securepush.device_check(p_device, p_secret_hash, p_throttle_keys) c;
    RETURN QUERY SELECT auth.user_id, auth.blocked_for, NULL::uuid, NULL::boolean, NULL::boolean, NULL::text,
                        NULL::timestamptz, NULL::timestamptz, NULL::text;
    IF auth.user_id IS NULL OR coalesce(cardinality(p_ids), 0) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT NULL::text, NULL::double precision, f.id, f.owned, f.live, f.payload, f.created_at, f.read_at, f.category
                 FROM securepush.fetch_for_device(auth.user_id, p_device, p_ids) f;
END
$$;

CREATE FUNCTION securepush.device_fetch_batch(p_devices uuid[], p_hashes bytea[], p_keys text[], p_key_req integer[],
                                              p_req integer[], p_ids uuid[])
RETURNS TABLE(req integer, user_id text, blocked_for double precision, id uuid, owned boolean, live boolean, payload text,
              created_at timestamptz, read_at timestamptz, category text)
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH requests AS (
        SELECT r.req::integer AS req, r.device, r.hash
        FROM unnest(p_devices, p_hashes) WITH ORDINALITY AS r(device, hash, req)
    ),
    granted AS (
        SELECT q.req, q.device, d.user_id, d.last_seen_at
        FROM requests q
        JOIN securepush.devices d ON d.id = q.device AND d.secret_hash = q.hash AND d.active
    ),
    seen AS (
        UPDATE securepush.devices d SET last_seen_at = now()
        WHERE d.id IN (SELECT s.id FROM securepush.devices s
                       WHERE s.id IN (SELECT g.device FROM granted g
                                      WHERE g.last_seen_at IS NULL OR g.last_seen_at < now() - interval '1 minute')
                       FOR UPDATE SKIP LOCKED)
    ),
    wanted AS (
        SELECT w.req, w.id, w.ord, g.user_id, g.device
        FROM unnest(p_req, p_ids) WITH ORDINALITY AS w(req, id, ord)
        JOIN granted g ON g.req = w.req
    ),
    marked AS (
        UPDATE securepush.notifications n
        SET read_at = coalesce(n.read_at, now()),
            read_by_device = coalesce(n.read_by_device,
                                      (SELECT w.device FROM wanted w WHERE w.id = n.id AND w.user_id = n.user_id LIMIT 1))
        WHERE n.id = ANY(p_ids) AND n.expires_at > now() AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
          AND EXISTS (SELECT 1 FROM wanted w WHERE w.id = n.id AND w.user_id = n.user_id)
        RETURNING n.id, n.user_id, n.payload::text AS payload, n.created_at, n.read_at, n.category
    ),
    fetched AS (
        INSERT INTO securepush.fetches (notification_id, device_id)
        SELECT DISTINCT m.id, w.device FROM marked m JOIN wanted w ON w.id = m.id AND w.user_id = m.user_id
        ON CONFLICT (notification_id, device_id) DO NOTHING
    ),
    dead AS (
        SELECT n.id, n.user_id FROM securepush.notifications n
        WHERE n.id = ANY(p_ids) AND NOT (n.expires_at > now() AND n.purged_at IS NULL)
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
    )
    SELECT q.req, g.user_id,
           CASE WHEN g.user_id IS NULL
                THEN securepush.auth_blocked_for(ARRAY(SELECT k.key FROM unnest(p_keys, p_key_req) AS k(key, req) WHERE k.req = q.req))
                ELSE 0::double precision END,
           NULL::uuid, NULL::boolean, NULL::boolean, NULL::text, NULL::timestamptz, NULL::timestamptz, NULL::text
    FROM requests q LEFT JOIN granted g ON g.req = q.req
    UNION ALL
    SELECT w.req, NULL::text, NULL::double precision, w.id, m.id IS NOT NULL OR d.id IS NOT NULL, m.id IS NOT NULL,
           m.payload, m.created_at, m.read_at, m.category
    FROM wanted w
    LEFT JOIN marked m ON m.id = w.id AND m.user_id = w.user_id
    LEFT JOIN dead d ON d.id = w.id AND d.user_id = w.user_id;
END
$$;

CREATE FUNCTION securepush.device_list(p_device uuid, p_secret_hash bytea, p_throttle_keys text[], p_unread_only boolean,
                                       p_limit integer, p_after_micros bigint, p_after_id uuid, p_with_payloads boolean)
RETURNS TABLE(user_id text, blocked_for double precision, id uuid, created_at timestamptz, read_at timestamptz, micros bigint,
              payload text, category text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    auth record;
BEGIN
    SELECT c.user_id, c.blocked_for INTO auth FROM securepush.device_check(p_device, p_secret_hash, p_throttle_keys) c;
    RETURN QUERY SELECT auth.user_id, auth.blocked_for, NULL::uuid, NULL::timestamptz, NULL::timestamptz, NULL::bigint,
                        NULL::text, NULL::text;
    IF auth.user_id IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH page AS (
        SELECT n.id, n.created_at, n.read_at, n.category, (extract(epoch FROM n.created_at) * 1000000)::bigint AS micros,
               row_number() OVER (ORDER BY n.created_at DESC, n.id DESC) AS position
        FROM (
            SELECT n.id, n.created_at, n.read_at, n.category
            FROM securepush.notifications n
            WHERE n.user_id = auth.user_id AND n.expires_at > now() AND n.purged_at IS NULL
              AND (n.deliver_at IS NULL OR n.deliver_at <= now())
              AND (NOT p_unread_only OR n.read_at IS NULL)
              AND (p_after_id IS NULL
                   OR (n.created_at, n.id) < ('epoch'::timestamptz + p_after_micros * interval '1 microsecond', p_after_id))
            ORDER BY n.created_at DESC, n.id DESC
            LIMIT p_limit + 1
        ) n
    ),
    fetched AS (
        SELECT f.id, f.live, f.payload, f.read_at
        FROM securepush.fetch_for_device(auth.user_id, p_device,
                                         CASE WHEN p_with_payloads THEN ARRAY(SELECT p.id FROM page p WHERE p.position <= p_limit)
                                              ELSE '{}'::uuid[] END) f
    )
    SELECT NULL::text, NULL::double precision, p.id, p.created_at, coalesce(f.read_at, p.read_at), p.micros,
           CASE WHEN f.live THEN f.payload END, p.category
    FROM page p
    LEFT JOIN fetched f ON f.id = p.id
    WHERE NOT p_with_payloads OR p.position > p_limit OR f.live
    ORDER BY p.position;
END
$$;

-- Operators see scheduled and held deliveries with their next attempt.
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
    SELECT l.device_id, l.platform, 'finished', l.outcome, l.attempts, NULL::timestamptz, l.last_error,
           CASE WHEN l.outcome = 'sent' THEN coalesce(l.accepted_at, l.finished_at) END, l.finished_at
    FROM securepush.delivery_log l WHERE l.notification_id = n.id AND l.kind = 'notify'
    UNION ALL
    SELECT f.device_id, dev.platform, 'not_pushed', NULL, 0, NULL, NULL, NULL, NULL
    FROM securepush.fetches f LEFT JOIN securepush.devices dev ON dev.id = f.device_id
    WHERE f.notification_id = n.id
      AND NOT EXISTS (SELECT 1 FROM securepush.deliveries d WHERE d.notification_id = n.id AND d.device_id = f.device_id AND d.kind = 'notify')
      AND NOT EXISTS (SELECT 1 FROM securepush.delivery_log l WHERE l.notification_id = n.id AND l.device_id = f.device_id AND l.kind = 'notify')
) x
LEFT JOIN securepush.fetches f ON f.notification_id = n.id AND f.device_id = x.device_id;
