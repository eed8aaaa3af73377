-- securepush.reschedule_user: routine file (docs/sql.md).
--
-- Re-times a user's waiting first attempts after their quiet hours changed.
CREATE OR REPLACE FUNCTION securepush.reschedule_user(p_user text)
 RETURNS integer
 LANGUAGE plpgsql SET jit TO 'off'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION securepush.reschedule_user(p_user text) FROM PUBLIC;
