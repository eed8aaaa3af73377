-- securepush.release_at: routine file (docs/sql.md).
--
-- When a notification of p_urgency meant for p_at may be pushed to p_user: the end of the user's quiet
-- window, or p_at itself (no quiet hours, outside them, or time-sensitive and critical notifications).
CREATE OR REPLACE FUNCTION securepush.release_at(p_user text, p_at timestamp with time zone, p_urgency text)
 RETURNS timestamp with time zone
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(
        (SELECT securepush.quiet_release(q.time_zone, q.starts, q.ends, p_at)
         FROM securepush.quiet_hours q
         WHERE q.user_id = p_user AND p_urgency NOT IN ('time_sensitive', 'critical')),
        p_at)
$function$;
REVOKE ALL ON FUNCTION securepush.release_at(p_user text, p_at timestamp with time zone, p_urgency text) FROM PUBLIC;
