-- securepush.claim_items: routine file (docs/sql.md).
--
-- The items of the lease p_lease (a securepush.claims row, since 046), one row each in the lease's order
-- (place, from 1): the one spelling of a lease's four aligned arrays (048), read by the view claimed_items, the
-- claim's result (through that view), claim_outcomes, claim_rest and requeue_claimed. Every role may call it:
-- it reads nothing but its argument, and a role granted SELECT on the view (the monitor's, docs/operations.md)
-- calls it as itself. No SET options since 050, so that the planner inlines it into each caller's statement
-- (PostgreSQL 15 plans a SQL function it does not inline again at every statement that calls it: in every
-- claim and completion); each array is unnested by its qualified name instead of under a fixed search path.
CREATE OR REPLACE FUNCTION securepush.claim_items(p_lease securepush.claims)
 RETURNS TABLE(id uuid, notification_id uuid, device_id uuid, platform text, place bigint)
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT i.id, i.notification_id, i.device_id, i.platform, i.place
    FROM ROWS FROM (pg_catalog.unnest(p_lease.ids), pg_catalog.unnest(p_lease.notification_ids),
                    pg_catalog.unnest(p_lease.device_ids), pg_catalog.unnest(p_lease.platforms))
        WITH ORDINALITY AS i(id, notification_id, device_id, platform, place)
$function$;
