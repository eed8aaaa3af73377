-- securepush.fan_out_place: routine file (docs/sql.md).
--
-- Where notification id stands in the order of fan-out, seen from a batch being fanned out (batch, with
-- positions: their queue positions): its queue position, from the batch or from the queue (one that another
-- dispatcher is fanning out right now included, so that both batches agree on the order); 0 when it was fanned
-- out before.
-- No SET options, so that the planner inlines it into its callers (superseding, under fan_out_batch's fixed path).
CREATE OR REPLACE FUNCTION securepush.fan_out_place(id uuid, batch uuid[], positions bigint[])
 RETURNS bigint
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(positions[pg_catalog.array_position(batch, id)],
                    (SELECT q.position FROM securepush.fan_out_queue q WHERE q.notification_id = id),
                    0)
$function$;
REVOKE ALL ON FUNCTION securepush.fan_out_place(id uuid, batch uuid[], positions bigint[]) FROM PUBLIC;
