-- securepush.reschedule_pending: routine file (docs/sql.md).
--
-- One round of reschedule_round for `p_users` users and 2,000 notifications; returns the deliveries moved
-- (what builds before 0.3.2 call once a schedule round).
CREATE OR REPLACE FUNCTION securepush.reschedule_pending(p_users integer)
 RETURNS integer
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
BEGIN
    RETURN (SELECT r.moved FROM securepush.reschedule_round(p_users, 2000) r);
END
$function$;
REVOKE ALL ON FUNCTION securepush.reschedule_pending(p_users integer) FROM PUBLIC;
