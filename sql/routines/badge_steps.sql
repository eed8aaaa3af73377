-- securepush.badge_steps: routine file (docs/sql.md).
--
-- The one rule of the badge: a notification counts while unread, unpurged and unexpired, from its deliver_at
-- (at once when it has none) until its expires_at. badge_steps gives the row a notification adds to
-- securepush.badge_changes, times sign: +1 for a row that arrives (fan_out, the new side of an update), -1 for
-- one that leaves (the old side of an update, a delete), counting from effective_at until ends_at (one row
-- since 036, two steps before); none for a row that does not count. SQL and free of SET clauses so that the
-- planner inlines it into its callers' statements (a lateral join, no function call per row).
CREATE OR REPLACE FUNCTION securepush.badge_steps(sign integer, read_at timestamp with time zone,
    purged_at timestamp with time zone, deliver_at timestamp with time zone, expires_at timestamp with time zone)
 RETURNS TABLE(change integer, effective_at timestamp with time zone, ends_at timestamp with time zone)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT sign, coalesce(deliver_at, '-infinity'::timestamptz), expires_at
    WHERE read_at IS NULL AND purged_at IS NULL AND expires_at > now()
$function$;
REVOKE ALL ON FUNCTION securepush.badge_steps(integer, timestamp with time zone, timestamp with time zone,
    timestamp with time zone, timestamp with time zone) FROM PUBLIC;
