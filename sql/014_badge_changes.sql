-- The unread badge without a count per user in every claim.
--
-- Until now each claim counted every recipient's unread, unexpired notifications (up to 999 index entries
-- and heap rows per user): with 100 unread per user that was most of a drain's database time. The badge is
-- now a sum of a few rows of `badge_changes`, written by the statements that already change the
-- notifications (their triggers), and read by the claim with one index walk per user.
--
-- Each unread, unexpired notification contributes +1 from now on and -1 from its `expires_at`: two rows,
-- `(user, +1, -infinity)` and `(user, -1, expires_at)`, summed per statement. Reading it (or deleting it,
-- or anything else that ends its "unread and unexpired" state before it expires) writes the opposite pair.
-- The badge at time t is the sum of the user's rows effective at t (`effective_at <= t`), so a notification
-- leaves the badge when it expires without anything writing at that moment. The rows are only ever
-- inserted, by whichever transaction changes the notifications, and summed by whoever reads: no row is
-- updated in place, so producers, readers and dispatchers never wait for one another's locks (a producer's
-- long transaction does not hold up a read), and a producer in REPEATABLE READ never gets a
-- serialization failure from it.
--
-- Maintenance folds each user's effective rows into one (`compact_badge_changes`, a few thousand users per
-- round in user order) and cancels the future pairs that a read or a delete wrote against an insert's.
-- Uncompacted rows only make the claim's walk a few rows longer; the sum is exact either way.
--
-- The badge counts what the claim counted before: unread notifications whose `expires_at` is later than
-- the claim's time (purged or not), at most 999.

-- Notifications must not change while the rows for the existing ones are written (a concurrent insert
-- would be counted by neither the old fan-out nor the backfill).
LOCK TABLE securepush.notifications IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE securepush.badge_changes (
    user_id      text NOT NULL,
    change       integer NOT NULL,
    effective_at timestamptz NOT NULL
);
CREATE INDEX badge_changes_user_idx ON securepush.badge_changes (user_id, effective_at) INCLUDE (change);

INSERT INTO securepush.badge_changes (user_id, change, effective_at)
SELECT user_id, sum(change), effective_at
FROM (
    SELECT n.user_id, 1 AS change, '-infinity'::timestamptz AS effective_at
    FROM securepush.notifications n WHERE n.read_at IS NULL AND n.expires_at > now()
    UNION ALL
    SELECT n.user_id, -1, n.expires_at
    FROM securepush.notifications n WHERE n.read_at IS NULL AND n.expires_at > now()
) c
GROUP BY user_id, effective_at;

-- 013's fan-out, also writing the inserted notifications' badge rows (in the trigger firing the insert
-- already pays for).
CREATE OR REPLACE FUNCTION securepush.fan_out() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO securepush.badge_changes (user_id, change, effective_at)
    SELECT user_id, sum(change), effective_at
    FROM (
        SELECT n.user_id, 1 AS change, '-infinity'::timestamptz AS effective_at
        FROM new_notifications n WHERE n.read_at IS NULL AND n.expires_at > now()
        UNION ALL
        SELECT n.user_id, -1, n.expires_at
        FROM new_notifications n WHERE n.read_at IS NULL AND n.expires_at > now()
    ) c
    GROUP BY user_id, effective_at;
    INSERT INTO securepush.deliveries (notification_id, device_id, platform, priority, expires_at)
    SELECT n.id, d.id, d.platform, n.priority, n.expires_at
    FROM new_notifications n
    JOIN securepush.devices d ON d.user_id = n.user_id AND d.active
    WHERE n.expires_at > now() AND n.payload IS NOT NULL;
    IF FOUND THEN
        PERFORM securepush.wake_dispatchers();
    END IF;
    RETURN NULL;
END
$$;

-- Any update: what the old rows contributed goes, what the new rows contribute comes (a read, a changed
-- expiry or user; rows whose state did not change cancel out and write nothing).
CREATE FUNCTION securepush.badge_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO securepush.badge_changes (user_id, change, effective_at)
    SELECT user_id, sum(change), effective_at
    FROM (
        SELECT o.user_id, -1 AS change, '-infinity'::timestamptz AS effective_at
        FROM old_rows o WHERE o.read_at IS NULL AND o.expires_at > now()
        UNION ALL
        SELECT o.user_id, 1, o.expires_at FROM old_rows o WHERE o.read_at IS NULL AND o.expires_at > now()
        UNION ALL
        SELECT n.user_id, 1, '-infinity'::timestamptz FROM new_rows n WHERE n.read_at IS NULL AND n.expires_at > now()
        UNION ALL
        SELECT n.user_id, -1, n.expires_at FROM new_rows n WHERE n.read_at IS NULL AND n.expires_at > now()
    ) c
    GROUP BY user_id, effective_at
    HAVING sum(change) <> 0;
    RETURN NULL;
END
$$;

CREATE FUNCTION securepush.badge_on_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO securepush.badge_changes (user_id, change, effective_at)
    SELECT user_id, sum(change), effective_at
    FROM (
        SELECT o.user_id, -1 AS change, '-infinity'::timestamptz AS effective_at
        FROM old_rows o WHERE o.read_at IS NULL AND o.expires_at > now()
        UNION ALL
        SELECT o.user_id, 1, o.expires_at FROM old_rows o WHERE o.read_at IS NULL AND o.expires_at > now()
    ) c
    GROUP BY user_id, effective_at;
    RETURN NULL;
END
$$;

CREATE TRIGGER notifications_badge_on_update
AFTER UPDATE ON securepush.notifications
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION securepush.badge_on_update();

CREATE TRIGGER notifications_badge_on_delete
AFTER DELETE ON securepush.notifications
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION securepush.badge_on_delete();

-- A user's badge now: the sum of the rows effective now, within 0 ... p_limit (one walk of the user's
-- entries in `badge_changes_user_idx`; the claim calls it under its own plan settings).
CREATE FUNCTION securepush.unread_badge(p_user text, p_limit integer) RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT least(greatest(coalesce(sum(b.change), 0), 0), p_limit)::bigint
    FROM securepush.badge_changes b
    WHERE b.user_id = p_user AND b.effective_at <= now();
$$;

-- Folds the badge rows of the next p_users users after p_after (in user order; NULL: from the first):
-- each user's effective rows become one, future rows of the same moment become one, and sums of zero go.
-- Returns the last user looked at, or NULL when there was none after p_after (the next round starts over).
-- Safe beside any writer and any other compaction: a row is deleted once and its change re-inserted by the
-- statement that deleted it.
CREATE FUNCTION securepush.compact_badge_changes(p_after text, p_users integer) RETURNS text
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $$
DECLARE
    users text[];
BEGIN
    -- The next users in index order, one index probe each.
    WITH RECURSIVE next_user(user_id, n) AS (
        (SELECT b.user_id, 1 FROM securepush.badge_changes b
         WHERE p_after IS NULL OR b.user_id > p_after ORDER BY b.user_id LIMIT 1)
        UNION ALL
        SELECT (SELECT b.user_id FROM securepush.badge_changes b WHERE b.user_id > nu.user_id ORDER BY b.user_id LIMIT 1),
               nu.n + 1
        FROM next_user nu WHERE nu.n < p_users AND nu.user_id IS NOT NULL
    )
    SELECT array_agg(nu.user_id ORDER BY nu.user_id) INTO users FROM next_user nu WHERE nu.user_id IS NOT NULL;
    IF users IS NULL THEN
        RETURN NULL;
    END IF;
    WITH candidates AS (
        SELECT b.user_id, b.change, b.effective_at,
               CASE WHEN b.effective_at <= now() THEN '-infinity'::timestamptz ELSE b.effective_at END AS bucket
        FROM securepush.badge_changes b WHERE b.user_id = ANY(users)
    ),
    -- What is worth rewriting: several rows of one moment, a sum of zero, or effective rows not yet folded.
    groups AS (
        SELECT c.user_id, c.bucket
        FROM candidates c GROUP BY c.user_id, c.bucket
        HAVING count(*) > 1 OR sum(c.change) = 0 OR bool_or(c.effective_at <> c.bucket)
    ),
    gone AS (
        DELETE FROM securepush.badge_changes b
        USING groups g
        WHERE b.user_id = g.user_id AND b.user_id = ANY(users)
          AND (CASE WHEN b.effective_at <= now() THEN '-infinity'::timestamptz ELSE b.effective_at END) = g.bucket
        RETURNING b.user_id, b.change, g.bucket
    )
    INSERT INTO securepush.badge_changes (user_id, change, effective_at)
    SELECT gone.user_id, sum(gone.change), gone.bucket FROM gone
    GROUP BY gone.user_id, gone.bucket
    HAVING sum(gone.change) <> 0;
    RETURN users[cardinality(users)];
END
$$;

-- 013's claim, reading the badge from `badge_changes` (one index walk per recipient of the batch).
CREATE OR REPLACE FUNCTION securepush.claim_deliveries(
    p_limit integer, p_platforms text[], p_lease_ms bigint, p_token uuid, p_worker uuid, p_badge boolean, p_badge_limit integer
) RETURNS TABLE (
    id uuid, notification_id uuid, device_id uuid, platform text, token text, options text, active boolean,
    expires_at timestamptz, priority smallint, attempts integer, unread bigint, clear_ids uuid[]
)
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
                  d.expires_at, d.priority, d.attempts, dev.user_id, d.clear_ids
    ),
    badges AS MATERIALIZED (
        SELECT jsonb_object_agg(u.user_id, securepush.unread_badge(u.user_id, p_badge_limit)) AS counts
        FROM (SELECT DISTINCT claimed.user_id FROM claimed) u
        WHERE p_badge
    )
    SELECT claimed.id, claimed.notification_id, claimed.device_id, claimed.platform, claimed.token, claimed.options,
           claimed.active, claimed.expires_at, claimed.priority, claimed.attempts,
           ((SELECT b.counts FROM badges b) ->> claimed.user_id)::bigint,
           claimed.clear_ids
    FROM claimed;
    GET DIAGNOSTICS claimed_rows = ROW_COUNT;
    IF claimed_rows > 0 THEN
        UPDATE securepush.dispatchers d SET awaiting_wakeup = false WHERE d.id = p_worker AND d.awaiting_wakeup;
    END IF;
END
$$;
