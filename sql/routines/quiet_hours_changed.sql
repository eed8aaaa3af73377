-- securepush.quiet_hours_changed: routine file (docs/sql.md).
--
-- Counts a change of the user's quiet hours against the hourly limit (setting max_quiet_hours_changes_per_hour,
-- 20 unless set; 0: none) and queues the re-timing of the user's waiting deliveries (reschedule_pending), from
-- the newest notification again. Over the limit it raises SPR01 with the seconds until the window ends as
-- DETAIL, and the change is rolled back: each change costs the dispatchers a walk over the user's queue.
CREATE OR REPLACE FUNCTION securepush.quiet_hours_changed(p_user text)
 RETURNS void
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    cap integer := coalesce((SELECT value::integer FROM securepush.settings
        WHERE key = 'max_quiet_hours_changes_per_hour'), 20);
    counted record;
BEGIN
    INSERT INTO securepush.quiet_hours_changes AS c (user_id) VALUES (p_user)
    ON CONFLICT ON CONSTRAINT quiet_hours_changes_pkey DO UPDATE
        SET changes = CASE WHEN c.window_started_at > now() - interval '1 hour' THEN c.changes + 1 ELSE 1 END,
            window_started_at = CASE WHEN c.window_started_at > now() - interval '1 hour' THEN c.window_started_at
                ELSE now() END
    RETURNING c.changes, c.window_started_at INTO counted;
    IF cap > 0 AND counted.changes > cap THEN
        RAISE EXCEPTION 'too many quiet-hours changes for this user'
            USING ERRCODE = 'SPR01',
                  DETAIL = greatest(1, ceil(extract(epoch
                      FROM counted.window_started_at + interval '1 hour' - now())))::integer::text;
    END IF;
    INSERT INTO securepush.reschedules AS r (user_id) VALUES (p_user)
    ON CONFLICT ON CONSTRAINT reschedules_pkey DO UPDATE SET requested_at = now(), before_created_at = NULL,
        before_id = NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.quiet_hours_changed(p_user text) FROM PUBLIC;
