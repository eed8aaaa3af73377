-- securepush.badge_on_update: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.badge_on_update()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    -- A notification still waiting for its fan-out has no badge rows yet: the fan-out writes them as it then
    -- is. Its queue row is locked first, so that a fan-out taking it now finishes before this looks.
    -- (Its ids as an array: an index condition whatever the statistics say; stop 67.)
    PERFORM 1 FROM securepush.fan_out_queue q
    WHERE q.notification_id = ANY(ARRAY(SELECT o.id FROM old_rows o))
    FOR UPDATE;
    -- The old row leaves and the new one arrives; an update that changes nothing the badge counts nets to no row.
    INSERT INTO securepush.badge_changes (user_id, change, effective_at, ends_at)
    SELECT r.user_id, sum(s.change), s.effective_at, s.ends_at
    FROM (SELECT -1 AS sign, o.id, o.user_id, o.read_at, o.purged_at, o.deliver_at, o.expires_at FROM old_rows o
          UNION ALL
          SELECT 1, n.id, n.user_id, n.read_at, n.purged_at, n.deliver_at, n.expires_at FROM new_rows n) r,
         securepush.badge_steps(r.sign, r.read_at, r.purged_at, r.deliver_at, r.expires_at) s
    WHERE NOT EXISTS (SELECT 1 FROM securepush.fan_out_queue q WHERE q.notification_id = r.id)
    GROUP BY r.user_id, s.effective_at, s.ends_at
    HAVING sum(s.change) <> 0;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.badge_on_update() FROM PUBLIC;
