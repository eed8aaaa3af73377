-- securepush.release_deliveries: routine file (docs/sql.md).
--
-- Gives back claimed deliveries p_ids of the claim p_token unsent (a dispatcher stopping, a circuit breaker,
-- the replication gate): pending again without the attempt counted, due after p_delay_ms, or keeping their
-- place in line without one. Delivery rows are updated; items of the claim's lease (securepush.claims) become
-- pending rows (securepush.requeue_claimed) and the lease keeps the rest. Only what p_token still holds is
-- touched (a lease rescued meanwhile is not); returns how many were released.
CREATE OR REPLACE FUNCTION securepush.release_deliveries(p_token uuid, p_ids uuid[], p_delay_ms bigint)
 RETURNS bigint
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET jit TO 'off'
AS $function$
DECLARE
    lease securepush.claims;
    released bigint;
BEGIN
    WITH r AS (
        UPDATE securepush.deliveries d
        SET state = 'pending', attempts = greatest(d.attempts - 1, 0), lease_token = NULL, lease_expires_at = NULL,
            claimed_by = NULL,
            run_at = CASE WHEN p_delay_ms > 0 THEN greatest(d.run_at, now() + p_delay_ms * interval '1 millisecond')
                          ELSE d.run_at END
        WHERE d.id = ANY(p_ids) AND d.lease_token = p_token
        RETURNING 1
    )
    SELECT count(*) INTO released FROM r;
    DELETE FROM securepush.claims c WHERE c.token = p_token RETURNING c.* INTO lease;
    IF lease.token IS NOT NULL THEN
        -- requeue_claimed takes only the lease's items among p_ids (the rest are delivery rows, released above).
        IF cardinality(p_ids) > 0 THEN
            released := released + securepush.requeue_claimed(lease, p_ids,
                array_fill(CASE WHEN p_delay_ms > 0 THEN now() + p_delay_ms * interval '1 millisecond'
                                ELSE lease.claimed_at END, ARRAY[cardinality(p_ids)]),
                array_fill(0, ARRAY[cardinality(p_ids)]), array_fill(NULL::text, ARRAY[cardinality(p_ids)]));
        END IF;
        PERFORM securepush.claim_rest(lease, p_ids);
    END IF;
    RETURN released;
END
$function$;
REVOKE ALL ON FUNCTION securepush.release_deliveries(p_token uuid, p_ids uuid[], p_delay_ms bigint) FROM PUBLIC;
