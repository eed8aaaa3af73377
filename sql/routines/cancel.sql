-- securepush.cancel: routine file (docs/sql.md).
--
-- Cancels a notification: its waiting deliveries are cancelled and logged, its payload purged. Pushes
-- already with a platform (in_flight) cannot be recalled; a device that fetches afterwards is told the
-- notification is gone. No row for an unknown id. It waits at most 5 s for a lock (then SQLSTATE 55P03, which a
-- producer may retry): a notification another transaction holds fails the cancel instead of stalling it.
-- Cancels by the producer's idempotency key.
CREATE OR REPLACE FUNCTION securepush.cancel(notification_id uuid)
 RETURNS TABLE(id uuid, cancelled_deliveries integer, in_flight integer, already_pushed integer, payload_purged boolean)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET lock_timeout TO '5s'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
    target uuid := notification_id;
    purged boolean;
BEGIN
    -- Another producer's notification is, to this one, one that does not exist.
    IF NOT EXISTS (SELECT 1 FROM securepush.notifications n
                   WHERE n.id = target AND (n.producer = session_user OR securepush.all_producers_visible())) THEN
        RETURN;
    END IF;
    -- One still waiting for its fan-out is fanned out first (before its row is locked, which a fan-out under
    -- way may be reading), so that what it would have been sent is cancelled and logged as such.
    PERFORM securepush.fan_out_batch(ARRAY[target]);
    PERFORM 1 FROM securepush.notifications n WHERE n.id = target FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    UPDATE securepush.notifications n
    SET payload = NULL, preview = NULL, traceparent = NULL, purged_at = now(), cancelled_at = now()
    WHERE n.id = target AND n.purged_at IS NULL;
    purged := FOUND;
    RETURN QUERY
    WITH gone AS (
        DELETE FROM securepush.deliveries dl
        WHERE dl.notification_id = target AND dl.kind = 'notify' AND dl.state IN ('scheduled', 'pending')
        RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at
    ),
    logged AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error,
            created_at, kind)
        SELECT g.id, g.notification_id, g.device_id, g.platform, 'cancelled', g.attempts, 'cancelled by the producer',
            g.created_at, 'notify'
        FROM gone g
        RETURNING 1
    )
    SELECT target,
           (SELECT count(*)::integer FROM logged),
           (SELECT count(*)::integer FROM securepush.deliveries d WHERE d.notification_id = target
               AND d.kind = 'notify' AND d.state = 'claimed')
               + (SELECT count(*)::integer FROM securepush.claimed_items c WHERE c.notification_id = target),
           (SELECT count(*)::integer FROM securepush.delivery_log l WHERE l.notification_id = target
               AND l.kind = 'notify' AND l.outcome = 'sent'),
           purged;
END
$function$;
REVOKE ALL ON FUNCTION securepush.cancel(notification_id uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.cancel(notification_id uuid) TO securepush_producer;
CREATE OR REPLACE FUNCTION securepush.cancel(user_id text, idempotency_key text)
 RETURNS TABLE(id uuid, cancelled_deliveries integer, in_flight integer, already_pushed integer, payload_purged boolean)
 LANGUAGE sql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
    SELECT c.* FROM securepush.notifications n, securepush.cancel(n.id) c
    WHERE n.user_id = cancel.user_id AND n.idempotency_key = cancel.idempotency_key
      AND (n.producer = session_user OR securepush.all_producers_visible())
$function$;
REVOKE ALL ON FUNCTION securepush.cancel(user_id text, idempotency_key text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.cancel(user_id text, idempotency_key text) TO securepush_producer;
