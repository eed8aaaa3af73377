-- securepush.reschedule_user: routine file (docs/sql.md).
--
-- Re-times, after the user's quiet hours changed, the waiting first attempts of at most p_notifications of
-- the user's notifications, newest first, from those created before (p_before_created, p_before_id) (NULL:
-- the newest). Only deliveries whose time or state changes are written. Returns the deliveries moved, the
-- notifications walked, and where the walk stopped (NULL when it reached the oldest).
CREATE OR REPLACE FUNCTION securepush.reschedule_user(p_user text, p_before_created timestamp with time zone,
    p_before_id uuid,
                                                      p_notifications integer, OUT moved integer, OUT walked integer,
                                                      OUT stopped_created timestamp with time zone, OUT stopped_id uuid)
 RETURNS record
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    ids uuid[];
    due boolean;
BEGIN
    SELECT array_agg(p.id), count(*), (array_agg(p.created_at ORDER BY p.created_at, p.id))[1],
           (array_agg(p.id ORDER BY p.created_at, p.id))[1]
    INTO ids, walked, stopped_created, stopped_id
    FROM (SELECT n.id, n.created_at FROM securepush.notifications n
          WHERE n.user_id = p_user AND (p_before_created IS NULL OR (n.created_at, n.id) < (p_before_created,
              p_before_id))
          ORDER BY n.created_at DESC, n.id DESC
          LIMIT p_notifications) p;
    IF walked < p_notifications THEN
        stopped_created := NULL;
        stopped_id := NULL;
    END IF;
    WITH retimed AS (
        SELECT d.id, securepush.release_at(p_user, greatest(coalesce(n.deliver_at, now()), now()), d.urgency) AS run_at
        FROM securepush.deliveries d
        JOIN securepush.notifications n ON n.id = d.notification_id
        WHERE d.notification_id = ANY (ids) AND d.kind = 'notify' AND d.attempts = 0 AND d.state IN ('scheduled',
            'pending')
    ),
    updated AS (
        UPDATE securepush.deliveries d
        SET run_at = r.run_at, state = CASE WHEN r.run_at > now() THEN 'scheduled' ELSE 'pending' END
        FROM retimed r
        WHERE d.id = r.id AND d.state IN ('scheduled', 'pending')
          AND CASE WHEN r.run_at > now() THEN d.state = 'pending' OR d.run_at IS DISTINCT FROM r.run_at
              ELSE d.state = 'scheduled' END
        RETURNING d.state
    )
    SELECT count(*), bool_or(state = 'pending') INTO moved, due FROM updated;
    IF due THEN
        PERFORM securepush.wake_dispatchers();
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION securepush.reschedule_user(p_user text, p_before_created timestamp with time zone,
    p_before_id uuid, p_notifications integer, OUT moved integer, OUT walked integer,
    OUT stopped_created timestamp with time zone, OUT stopped_id uuid) FROM PUBLIC;
