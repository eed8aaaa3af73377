-- securepush.badge_on_update: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.badge_on_update()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    INSERT INTO securepush.badge_changes (user_id, change, effective_at)
    SELECT user_id, sum(change), effective_at
    FROM (
        SELECT o.user_id, -1 AS change, coalesce(o.deliver_at, '-infinity'::timestamptz) AS effective_at
        FROM old_rows o WHERE o.read_at IS NULL AND o.purged_at IS NULL AND o.expires_at > now()
        UNION ALL
        SELECT o.user_id, 1, o.expires_at
        FROM old_rows o WHERE o.read_at IS NULL AND o.purged_at IS NULL AND o.expires_at > now()
        UNION ALL
        SELECT n.user_id, 1, coalesce(n.deliver_at, '-infinity'::timestamptz)
        FROM new_rows n WHERE n.read_at IS NULL AND n.purged_at IS NULL AND n.expires_at > now()
        UNION ALL
        SELECT n.user_id, -1, n.expires_at
        FROM new_rows n WHERE n.read_at IS NULL AND n.purged_at IS NULL AND n.expires_at > now()
    ) c
    GROUP BY user_id, effective_at
    HAVING sum(change) <> 0;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.badge_on_update() FROM PUBLIC;
