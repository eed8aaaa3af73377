-- securepush.pushable: routine file (docs/sql.md).
--
-- Whether a notification is one the fan-out pushes: not expired, not purged, its category not muted by its user.
-- No SET options and no subquery (the mute's lives in securepush.category_muted since 050, called only for a
-- notification with a category), so that the planner inlines it into its callers (fan_out_batch, with a fixed
-- search path): before 050 it was planned again in every claim that fanned out.
CREATE OR REPLACE FUNCTION securepush.pushable(n securepush.notifications)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
    SELECT n.expires_at > pg_catalog.now() AND n.payload IS NOT NULL
       AND (n.category IS NULL OR NOT securepush.category_muted(n.user_id, n.category))
$function$;
REVOKE ALL ON FUNCTION securepush.pushable(n securepush.notifications) FROM PUBLIC;
