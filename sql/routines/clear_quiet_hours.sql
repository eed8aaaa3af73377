-- securepush.clear_quiet_hours: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.clear_quiet_hours(user_id text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
#variable_conflict use_variable
DECLARE
    removed boolean;
BEGIN
    DELETE FROM securepush.quiet_hours q WHERE q.user_id = user_id;
    removed := FOUND;
    IF removed THEN
        PERFORM securepush.quiet_hours_changed(user_id);
    END IF;
    RETURN removed;
END
$function$;
REVOKE ALL ON FUNCTION securepush.clear_quiet_hours(user_id text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.clear_quiet_hours(user_id text) TO securepush_accounts;
