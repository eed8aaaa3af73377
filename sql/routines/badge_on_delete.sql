-- securepush.badge_on_delete: routine file (docs/sql.md).
--
-- A notification counts towards the badge while unread, unpurged and unexpired, from its deliver_at.
CREATE OR REPLACE FUNCTION securepush.badge_on_delete()
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
    ) c
    GROUP BY user_id, effective_at
    HAVING sum(change) <> 0;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.badge_on_delete() FROM PUBLIC;
