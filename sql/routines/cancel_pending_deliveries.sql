-- securepush.cancel_pending_deliveries: routine file (docs/sql.md).
--
-- 001's cancel, for scheduled deliveries too.
CREATE OR REPLACE FUNCTION securepush.cancel_pending_deliveries(target_device uuid, reason text,
    keep_user text DEFAULT NULL::text)
 RETURNS integer
 LANGUAGE sql
 SET jit TO 'off'
AS $function$
    WITH gone AS (
        DELETE FROM securepush.deliveries dl
        USING securepush.notifications n
        WHERE dl.device_id = target_device AND dl.state IN ('scheduled', 'pending') AND n.id = dl.notification_id
          AND (keep_user IS NULL OR n.user_id <> keep_user)
        RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at, dl.kind
    ),
    logged AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error,
            created_at, kind)
        SELECT id, notification_id, device_id, platform, 'cancelled', attempts, reason, created_at, kind FROM gone
        RETURNING 1
    )
    SELECT count(*)::integer FROM logged
$function$;
REVOKE ALL ON FUNCTION securepush.cancel_pending_deliveries(target_device uuid, reason text,
    keep_user text) FROM PUBLIC;
