-- securepush.rescue_claims: routine file (docs/sql.md).
--
-- Claims past their lease's end, whose dispatcher stopped or stalled, become pending deliveries again (their
-- attempt counted): claimed delivery rows, and the items of leases (securepush.claims, since 046), at most
-- p_limit leases per call, skipping what a completion holds. The maintenance calls it
-- (PostgresQueueMaintenance.rescueExpiredLeases), and securepush.claim_deliveries when it finds no work, so
-- leases are rescued whatever build runs the maintenance. Returns how many deliveries it rescued.
CREATE OR REPLACE FUNCTION securepush.rescue_claims(p_limit integer DEFAULT 100)
 RETURNS bigint
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET jit TO 'off'
AS $function$
DECLARE
    lease securepush.claims;
    rescued bigint;
BEGIN
    WITH r AS (
        UPDATE securepush.deliveries d
        SET state = 'pending', lease_token = NULL, lease_expires_at = NULL, claimed_by = NULL,
            last_error = 'lease expired (dispatcher stopped or stalled)'
        WHERE d.id = ANY (ARRAY(
            SELECT x.id FROM securepush.deliveries x WHERE x.state = 'claimed' AND x.lease_expires_at < now()
            FOR UPDATE SKIP LOCKED))
        RETURNING 1
    )
    SELECT count(*) INTO rescued FROM r;
    FOR lease IN
        DELETE FROM securepush.claims c
        WHERE c.token = ANY (ARRAY(
            SELECT x.token FROM securepush.claims x WHERE x.lease_expires_at < now()
            ORDER BY x.lease_expires_at LIMIT p_limit
            FOR UPDATE SKIP LOCKED))
        RETURNING c.*
    LOOP
        rescued := rescued + securepush.requeue_claimed(lease, lease.ids,
            array_fill(now(), ARRAY[cardinality(lease.ids)]), array_fill(1, ARRAY[cardinality(lease.ids)]),
            array_fill('lease expired (dispatcher stopped or stalled)'::text, ARRAY[cardinality(lease.ids)]));
    END LOOP;
    RETURN rescued;
END
$function$;
REVOKE ALL ON FUNCTION securepush.rescue_claims(p_limit integer) FROM PUBLIC;
