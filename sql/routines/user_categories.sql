-- securepush.user_categories: routine file (docs/sql.md).
--
-- The categories a user has (in live notifications) or muted, and whether each is muted.
CREATE OR REPLACE FUNCTION securepush.user_categories(p_user text)
 RETURNS TABLE(category text, muted boolean, latest_at timestamp with time zone)
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
    SELECT c.category, bool_or(c.muted), max(c.latest_at)
    FROM (
        SELECT n.category, false AS muted, max(coalesce(n.deliver_at, n.created_at)) AS latest_at
        FROM securepush.notifications n
        WHERE n.user_id = p_user AND n.category IS NOT NULL AND n.expires_at > now() AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
        GROUP BY n.category
        UNION ALL
        SELECT m.category, true, NULL::timestamptz FROM securepush.category_mutes m WHERE m.user_id = p_user
    ) c
    GROUP BY c.category
    ORDER BY c.category
$function$;
REVOKE ALL ON FUNCTION securepush.user_categories(p_user text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.user_categories(p_user text) TO securepush_accounts;
