-- securepush.await_wakeup: routine file (docs/sql.md).
--
-- Called by a dispatcher about to wait for a wake-up (after its last claim found nothing).
CREATE OR REPLACE FUNCTION securepush.await_wakeup(p_worker uuid)
 RETURNS void
 LANGUAGE sql
 SET jit TO 'off'
AS $function$
    UPDATE securepush.dispatchers SET awaiting_wakeup = true WHERE id = p_worker AND NOT awaiting_wakeup;
$function$;
REVOKE ALL ON FUNCTION securepush.await_wakeup(p_worker uuid) FROM PUBLIC;
