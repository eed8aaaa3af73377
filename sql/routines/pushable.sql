-- securepush.pushable: routine file (docs/sql.md).
--
-- Whether a notification is one the fan-out pushes: not expired, not purged, its category not muted by its user.
-- No SET options, so that the planner inlines it into its callers (fan_out_batch, with a fixed search path).
CREATE OR REPLACE FUNCTION securepush.pushable(n securepush.notifications)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
    SELECT n.expires_at > pg_catalog.now() AND n.payload IS NOT NULL
       AND (n.category IS NULL OR NOT EXISTS (
               SELECT 1 FROM securepush.category_mutes m WHERE m.user_id = n.user_id AND m.category = n.category))
$function$;
REVOKE ALL ON FUNCTION securepush.pushable(n securepush.notifications) FROM PUBLIC;
