-- securepush.clear_quiet_hours: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.clear_quiet_hours(user_id text)
 RETURNS boolean
 LANGUAGE plpgsql SET jit TO 'off'
AS $function$
#variable_conflict use_variable
DECLARE
    removed boolean;
BEGIN
    DELETE FROM securepush.quiet_hours q WHERE q.user_id = user_id;
    removed := FOUND;
    IF removed THEN
        INSERT INTO securepush.reschedules AS r (user_id) VALUES (user_id)
        ON CONFLICT ON CONSTRAINT reschedules_pkey DO UPDATE SET requested_at = now();
    END IF;
    RETURN removed;
END
$function$;
REVOKE ALL ON FUNCTION securepush.clear_quiet_hours(user_id text) FROM PUBLIC;
