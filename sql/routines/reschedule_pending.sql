-- securepush.reschedule_pending: routine file (docs/sql.md).
--
-- Re-times the waiting deliveries of at most `p_users` users whose quiet hours changed, oldest request first,
-- skipping users another session is re-timing; returns the deliveries moved. A request made while its user
-- is re-timed stays (its time differs) and is taken in a later round.
CREATE OR REPLACE FUNCTION securepush.reschedule_pending(p_users integer)
 RETURNS integer
 LANGUAGE plpgsql SET jit TO 'off'
AS $function$
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
$function$;
REVOKE ALL ON FUNCTION securepush.reschedule_pending(p_users integer) FROM PUBLIC;
