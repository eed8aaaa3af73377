-- securepush.delivery_feed: routine file (docs/sql.md).
--
-- The producers' outcome feed in one order, (xid, position), each event written once (since 032; the events
-- of earlier rows are rows of delivery_events): 'queued' and 'muted' from delivery_events; each delivery's
-- last word from its history row (delivery_log): 'pushed' (accepted by the platform; detail: its message id,
-- when it gave one), 'undelivered' (detail 'token_invalid', or 'failed' after the last attempt), 'expired',
-- 'cancelled', 'superseded' (detail: the server's reason); 'fetched' from the device's first fetch (its
-- fetches row). A delivery pushed at its fan-out has no 'queued' row of its own (since 036): its history row
-- carries it, and queued_at (when it was queued; NULL on every other row) tells events_after to show it just
-- before the outcome, at the same cursor. Clear pushes are the server's own and have no event. Read through
-- events_after, which keeps a cursor from skipping what commits late.
-- The filter stands outside the UNION ALL: a WHERE inside one of its branches keeps the planner from reading
-- that branch in index order, and events_after then sorted the whole history for each page (35 ms for
-- 50,000 rows against 0.4 ms).
CREATE OR REPLACE VIEW securepush.delivery_feed AS
SELECT u.xid, u.position, u.at, u.notification_id, u.device_id, u.platform, u.event, u.detail, u.queued_at
FROM (
    SELECT e.xid, e.position, e.at, e.notification_id, e.device_id, e.platform, e.event, e.detail, 'notify' AS kind,
           NULL::timestamptz AS queued_at
    FROM securepush.delivery_events e
    UNION ALL
    SELECT l.xid, l.position, l.finished_at, l.notification_id, l.device_id, l.platform,
           CASE l.outcome WHEN 'sent' THEN 'pushed' WHEN 'failed' THEN 'undelivered'
                          WHEN 'token_invalid' THEN 'undelivered'
                          ELSE l.outcome END,
           CASE l.outcome WHEN 'sent' THEN l.provider_message_id WHEN 'failed' THEN 'failed'
                          WHEN 'token_invalid' THEN 'token_invalid' ELSE l.last_error END,
           l.kind, CASE WHEN l.queued_with_outcome THEN l.created_at END
    FROM securepush.delivery_log l
    UNION ALL
    SELECT f.xid, f.position, f.fetched_at, f.notification_id, f.device_id, f.platform, 'fetched', NULL, 'notify',
           NULL::timestamptz
    FROM securepush.fetches f
) u
WHERE u.kind = 'notify' AND u.xid IS NOT NULL;
