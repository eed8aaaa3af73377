-- securepush.prune_delivery_events: routine file (docs/sql.md).
--
-- Deletes outcome events older than the retention, at most `batch`, oldest transactions first (the primary
-- key's order; no index on `at` on the hot path).
CREATE OR REPLACE FUNCTION securepush.prune_delivery_events(retention interval, batch integer)
 RETURNS bigint
 LANGUAGE sql
 SET jit TO 'off'
AS $function$
    WITH oldest AS (
        SELECT e.xid, e.position FROM securepush.delivery_events e ORDER BY e.xid, e.position LIMIT batch
    ),
    gone AS (
        DELETE FROM securepush.delivery_events e USING oldest o
        WHERE e.xid = o.xid AND e.position = o.position AND e.at < now() - retention
        RETURNING 1
    )
    SELECT count(*)::bigint FROM gone
$function$;
REVOKE ALL ON FUNCTION securepush.prune_delivery_events(retention interval, batch integer) FROM PUBLIC;
