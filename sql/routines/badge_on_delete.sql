-- securepush.badge_on_delete: routine file (docs/sql.md).
--
-- A deleted notification leaves the badge (securepush.badge_steps has the rule).
CREATE OR REPLACE FUNCTION securepush.badge_on_delete()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    -- As in badge_on_update: a notification still waiting for its fan-out has no badge rows to take back.
    PERFORM 1 FROM securepush.fan_out_queue q
    WHERE q.notification_id = ANY(ARRAY(SELECT o.id FROM old_rows o))
    FOR UPDATE;
    INSERT INTO securepush.badge_changes (user_id, change, effective_at, ends_at)
    SELECT o.user_id, sum(s.change), s.effective_at, s.ends_at
    FROM old_rows o, securepush.badge_steps(-1, o.read_at, o.purged_at, o.deliver_at, o.expires_at) s
    WHERE NOT EXISTS (SELECT 1 FROM securepush.fan_out_queue q WHERE q.notification_id = o.id)
    GROUP BY o.user_id, s.effective_at, s.ends_at
    HAVING sum(s.change) <> 0;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.badge_on_delete() FROM PUBLIC;
