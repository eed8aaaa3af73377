-- securepush.purge_payloads: routine file (docs/sql.md).
--
-- Erases payloads (and previews) of notifications that expired and, when `after_read` is set, of those first
-- read that long ago; at most `batch` of each kind per call; returns how many it erased.
--
-- The expired ones come from notifications_expires_idx. The read ones come from the reads themselves (since
-- 034 no index names read_at, so that marking a notification read is a HOT update): the fetches rows in the
-- feed's (xid, position) order after securepush.read_purge_cursor, only those of transactions that have
-- ended (below the snapshot's xmin, so that a read committing late is never passed over), and of those the
-- leading run first fetched at least `after_read` ago; the cursor then moves past that run. Reads from before
-- 032 (no feed position) come from securepush.read_purge_backlog, written by 034. A purge holding the cursor
-- makes another skip the read ones rather than wait.
--
-- Each batch is picked first and its rows then updated by primary key: the first form of this function,
-- `id IN (SELECT ... LIMIT batch FOR UPDATE SKIP LOCKED)`, let the planner (statistics stale after a bulk
-- insert) rescan the subquery for every row: a purge ran for minutes at full CPU.
CREATE OR REPLACE FUNCTION securepush.purge_payloads(after_read interval DEFAULT NULL::interval,
    batch integer DEFAULT 10000)
 RETURNS integer
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    purged integer := 0;
    more integer;
    cursor_at record;
    last_xid xid8;
    last_position bigint;
    read_ids uuid[];
BEGIN
    WITH expired AS (
        UPDATE securepush.notifications n SET payload = NULL, preview = NULL, traceparent = NULL, purged_at = now()
        WHERE n.id = ANY (ARRAY(
            SELECT e.id FROM securepush.notifications e
            WHERE e.purged_at IS NULL AND e.expires_at <= now()
            LIMIT batch
            FOR UPDATE SKIP LOCKED))
        RETURNING 1
    )
    SELECT count(*)::integer INTO purged FROM expired;
    IF after_read IS NULL THEN
        RETURN purged;
    END IF;

    SELECT c.xid, c.position INTO cursor_at FROM securepush.read_purge_cursor c FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
        WITH reads AS (
            SELECT f.notification_id, f.xid, f.position,
                   bool_and(f.fetched_at <= now() - after_read) OVER (ORDER BY f.xid, f.position) AS due
            FROM (SELECT r.notification_id, r.xid, r.position, r.fetched_at FROM securepush.fetches r
                  WHERE r.xid IS NOT NULL AND (r.xid, r.position) > (cursor_at.xid, cursor_at.position)
                    AND r.xid < pg_snapshot_xmin(pg_current_snapshot())
                  ORDER BY r.xid, r.position
                  LIMIT batch) f
        )
        SELECT array_agg(r.notification_id), (array_agg(r.xid ORDER BY r.xid DESC, r.position DESC))[1],
               (array_agg(r.position ORDER BY r.xid DESC, r.position DESC))[1]
        INTO read_ids, last_xid, last_position
        FROM reads r WHERE r.due;
        IF read_ids IS NOT NULL THEN
            UPDATE securepush.read_purge_cursor c SET xid = last_xid, position = last_position;
            UPDATE securepush.notifications n SET payload = NULL, preview = NULL, traceparent = NULL, purged_at = now()
            WHERE n.id = ANY (read_ids) AND n.purged_at IS NULL;
            GET DIAGNOSTICS more = ROW_COUNT;
            purged := purged + more;
        END IF;
    END IF;

    WITH backlog AS (
        DELETE FROM securepush.read_purge_backlog b
        WHERE b.notification_id = ANY (ARRAY(
            SELECT o.notification_id FROM securepush.read_purge_backlog o
            WHERE o.read_at <= now() - after_read
            ORDER BY o.read_at
            LIMIT batch
            FOR UPDATE SKIP LOCKED))
        RETURNING b.notification_id
    ),
    erased AS (
        UPDATE securepush.notifications n SET payload = NULL, preview = NULL, traceparent = NULL, purged_at = now()
        FROM backlog b WHERE n.id = b.notification_id AND n.purged_at IS NULL
        RETURNING 1
    )
    SELECT count(*)::integer INTO more FROM erased;
    RETURN purged + more;
END
$function$;
REVOKE ALL ON FUNCTION securepush.purge_payloads(after_read interval, batch integer) FROM PUBLIC;
