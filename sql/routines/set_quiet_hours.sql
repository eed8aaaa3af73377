-- securepush.set_quiet_hours: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.set_quiet_hours(user_id text, time_zone text, starts time without time zone,
    ends time without time zone)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
#variable_conflict use_variable
BEGIN
    IF user_id IS NULL OR length(user_id) NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'user_id must be 1 to 256 characters' USING ERRCODE = '22023';
    END IF;
    IF starts IS NULL OR ends IS NULL OR starts = ends THEN
        RAISE EXCEPTION 'quiet hours need a start and a different end' USING ERRCODE = '22023';
    END IF;
    IF time_zone IS NULL OR NOT EXISTS (SELECT 1 FROM securepush.time_zones z WHERE z.name = time_zone) THEN
        RAISE EXCEPTION 'time_zone must be an IANA time zone name such as Europe/Berlin' USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.quiet_hours AS q (user_id, time_zone, starts, ends)
    VALUES (user_id, time_zone, starts, ends)
    ON CONFLICT ON CONSTRAINT quiet_hours_pkey DO UPDATE SET time_zone = EXCLUDED.time_zone, starts = EXCLUDED.starts,
        ends = EXCLUDED.ends,
                                        updated_at = now();
    PERFORM securepush.quiet_hours_changed(user_id);
END
$function$;
REVOKE ALL ON FUNCTION securepush.set_quiet_hours(user_id text, time_zone text, starts time without time zone,
    ends time without time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.set_quiet_hours(user_id text, time_zone text, starts time without time zone,
    ends time without time zone) TO securepush_accounts;
