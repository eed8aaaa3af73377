-- securepush.fan_out_queued: routine file (docs/sql.md).
--
-- Fans out the oldest notifications waiting in securepush.fan_out_queue, at most p_limit, skipping those
-- another dispatcher holds; returns how many it took. securepush.claim_deliveries calls it first, so every
-- dispatcher (0.2.0's too) fans out before it claims, in the claim's transaction.
CREATE OR REPLACE FUNCTION securepush.fan_out_queued(p_limit integer)
 RETURNS integer
 LANGUAGE plpgsql SET enable_seqscan TO 'off' SET jit TO 'off' SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
DECLARE
    ids uuid[];
BEGIN
    SELECT array_agg(q.notification_id) INTO ids
    FROM (SELECT f.notification_id FROM securepush.fan_out_queue f ORDER BY f.position LIMIT p_limit FOR UPDATE SKIP LOCKED) q;
    IF ids IS NULL THEN
        RETURN 0;
    END IF;
    PERFORM securepush.fan_out_batch(ids);
    RETURN cardinality(ids);
END
$function$;
REVOKE ALL ON FUNCTION securepush.fan_out_queued(p_limit integer) FROM PUBLIC;
