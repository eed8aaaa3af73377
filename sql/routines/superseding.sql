-- securepush.superseding: routine file (docs/sql.md).
--
-- The notifications that supersede n, the newest first: its user's others with its collapse key that will be
-- pushed and are newer. Newer: a later transaction start (created_at), then a later deliver_at, then later in
-- the queue (securepush.fan_out_place: batch, the batch being fanned out, and positions, its queue positions).
-- No SET options, so that the planner inlines it into its callers (fan_out_batch, with a fixed search path).
CREATE OR REPLACE FUNCTION securepush.superseding(n securepush.notifications, batch uuid[], positions bigint[])
 RETURNS SETOF securepush.notifications
 LANGUAGE sql
 STABLE
AS $function$
    SELECT x.* FROM securepush.notifications x
    WHERE x.user_id = n.user_id AND x.collapse_key = n.collapse_key AND x.id <> n.id
      AND (x.created_at, coalesce(x.deliver_at, x.created_at), securepush.fan_out_place(x.id, batch, positions))
          > (n.created_at, coalesce(n.deliver_at, n.created_at), securepush.fan_out_place(n.id, batch, positions))
      AND securepush.pushable(x)
    ORDER BY x.created_at DESC, coalesce(x.deliver_at, x.created_at) DESC, securepush.fan_out_place(x.id, batch,
        positions) DESC
$function$;
REVOKE ALL ON FUNCTION securepush.superseding(n securepush.notifications, batch uuid[], positions bigint[]) FROM PUBLIC;
