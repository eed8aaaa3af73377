-- securepush.fan_out_queued: routine file (docs/sql.md).
--
-- Fans out the oldest notifications waiting in securepush.fan_out_queue, at most p_limit, skipping those
-- another dispatcher holds; returns how many it took. securepush.claim_deliveries calls it first, so every
-- dispatcher (0.2.0's too) fans out in the claim's transaction, and passes its claim on to fan_out_batch
-- (platforms, how many more, lease), which writes that many due deliveries claimed.
CREATE OR REPLACE FUNCTION securepush.fan_out_queued(p_limit integer, p_claim_platforms text[], p_claim_limit integer,
    p_lease_until timestamp with time zone, p_token uuid, p_worker uuid)
 RETURNS integer
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET jit TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
DECLARE
    ids uuid[];
BEGIN
    SELECT array_agg(q.notification_id) INTO ids
    FROM (SELECT f.notification_id
        FROM securepush.fan_out_queue f ORDER BY f.position LIMIT p_limit FOR UPDATE SKIP LOCKED) q;
    IF ids IS NULL THEN
        RETURN 0;
    END IF;
    PERFORM securepush.fan_out_batch(ids, p_claim_platforms, p_claim_limit, p_lease_until, p_token, p_worker);
    RETURN cardinality(ids);
END
$function$;
REVOKE ALL ON FUNCTION securepush.fan_out_queued(p_limit integer, p_claim_platforms text[], p_claim_limit integer,
    p_lease_until timestamp with time zone, p_token uuid, p_worker uuid) FROM PUBLIC;
-- The fan-out without a claim (033's signature): the tests, ops/fanout-compare and an operator fan out with it.
CREATE OR REPLACE FUNCTION securepush.fan_out_queued(p_limit integer)
 RETURNS integer
 LANGUAGE sql
AS $function$
    SELECT securepush.fan_out_queued(p_limit, '{}'::text[], 0, NULL::timestamptz, NULL::uuid, NULL::uuid)
$function$;
REVOKE ALL ON FUNCTION securepush.fan_out_queued(p_limit integer) FROM PUBLIC;
