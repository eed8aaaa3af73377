-- securepush.events_after: routine file (docs/sql.md).
--
-- The producers' outcome feed: at most max_events events after the cursor `after` (NULL: from the oldest
-- kept), in order, each with its cursor. A delivery pushed at its fan-out has its 'queued' event and its
-- outcome at one cursor (one history row, since 036): a page never ends between the two (with max_events 1,
-- a page of that cursor holds both). Only events whose transaction ended before every transaction still
-- running are returned, so a cursor never skips an event that commits later; a transaction left open holds
-- the feed back (it does not lose events). A producer login reads only the events of the notifications it
-- enqueued; an operator login and the server read all (all_producers_visible). Follow it with LISTEN securepush_events.
CREATE OR REPLACE FUNCTION securepush.events_after(after text DEFAULT NULL, max_events integer DEFAULT 1000)
 RETURNS TABLE(cursor text, at timestamp with time zone, notification_id uuid, device_id uuid, platform text,
    event text, detail text)
 LANGUAGE plpgsql
 STABLE
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
DECLARE
    after_xid xid8 := '0';
    after_position bigint := 0;
    every boolean := securepush.all_producers_visible();
BEGIN
    IF after IS NOT NULL THEN
        IF after !~ '^[0-9]{1,20}:[0-9]{1,19}$' THEN
            RAISE EXCEPTION 'after must be a cursor returned by events_after (digits:digits)' USING ERRCODE = '22023';
        END IF;
        after_xid := split_part(after, ':', 1)::xid8;
        after_position := split_part(after, ':', 2)::bigint;
    END IF;
    IF max_events IS NULL OR max_events NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'max_events must be between 1 and 10000' USING ERRCODE = '22023';
    END IF;
    -- A row of the feed carries two events when it is the outcome of a delivery pushed at its fan-out (its
    -- queued_at is set): the page takes rows in order while their events fit in max_events, and always its
    -- first row.
    RETURN QUERY
    WITH page AS MATERIALIZED (
        SELECT r.*, sum(CASE WHEN r.queued_at IS NULL THEN 1 ELSE 2 END) OVER (ORDER BY r.xid,
            r.position) AS events_through
        FROM (
            SELECT e.xid, e.position, e.at, e.notification_id, e.device_id, e.platform, e.event, e.detail, e.queued_at
            FROM securepush.delivery_feed e
            WHERE (e.xid, e.position) > (after_xid, after_position) AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
              AND (every OR EXISTS (SELECT 1 FROM securepush.notifications n WHERE n.id = e.notification_id
                  AND n.producer = session_user))
            ORDER BY e.xid, e.position
            LIMIT max_events
        ) r
    )
    SELECT p.xid::text || ':' || p.position, x.at, p.notification_id, p.device_id, p.platform, x.event, x.detail
    FROM page p
    CROSS JOIN LATERAL (VALUES (0, p.queued_at, 'queued'::text, NULL::text), (1, p.at, p.event, p.detail)) AS x(part,
        at, event, detail)
    WHERE (x.part = 1 OR p.queued_at IS NOT NULL)
      AND (p.events_through <= max_events OR p.events_through = CASE WHEN p.queued_at IS NULL THEN 1 ELSE 2 END)
    ORDER BY p.xid, p.position, x.part;
END
$function$;
REVOKE ALL ON FUNCTION securepush.events_after(after text, max_events integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.events_after(after text, max_events integer) TO securepush_producer;
