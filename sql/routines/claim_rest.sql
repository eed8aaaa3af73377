-- securepush.claim_rest: routine file (docs/sql.md).
--
-- After a completion or a release took the lease p_lease (deleting its securepush.claims row), writes it back
-- with the items that p_done did not end: those still being pushed, or left to lease rescue. Nothing when
-- every item ended, which is the happy path: the lease row is written once and deleted once per claim. An
-- anti-join that may hash (its callers turn hash joins off), not a comparison of every pair (047).
CREATE OR REPLACE FUNCTION securepush.claim_rest(p_lease securepush.claims, p_done uuid[])
 RETURNS void
 LANGUAGE sql
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
 SET enable_hashjoin TO 'on'
 SET jit TO 'off'
AS $function$
    INSERT INTO securepush.claims (token, worker, claimed_at, lease_expires_at, ids, notification_ids, device_ids,
        platforms)
    SELECT p_lease.token, p_lease.worker, p_lease.claimed_at, p_lease.lease_expires_at,
           array_agg(i.id ORDER BY i.place), array_agg(i.notification_id ORDER BY i.place),
           array_agg(i.device_id ORDER BY i.place), array_agg(i.platform ORDER BY i.place)
    FROM securepush.claim_items(p_lease) i
    WHERE NOT EXISTS (SELECT 1 FROM unnest(p_done) AS d(id) WHERE d.id = i.id)
    HAVING count(*) > 0
$function$;
REVOKE ALL ON FUNCTION securepush.claim_rest(p_lease securepush.claims, p_done uuid[]) FROM PUBLIC;
