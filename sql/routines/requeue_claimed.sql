-- securepush.requeue_claimed: routine file (docs/sql.md).
--
-- Writes the items p_ids of the lease p_lease (a securepush.claims row its caller took; ids that are not its
-- items are ignored) back as pending delivery rows: an item retried (complete_deliveries), released unsent
-- (release_deliveries) or held past its lease (rescue_claims). Each keeps its id, device, fan-out time and claim
-- time, as a claimed row going back to pending does; p_run_at, p_attempts and p_errors are per id. Its 'queued'
-- event is written now (securepush.delivery_queued_events): its claim at fan-out wrote none.
-- Its join may hash (its callers turn hash joins off; 047). An item whose notification was deleted meanwhile is
-- dropped with it. Returns how many rows it wrote.
CREATE OR REPLACE FUNCTION securepush.requeue_claimed(p_lease securepush.claims, p_ids uuid[],
    p_run_at timestamp with time zone[], p_attempts integer[], p_errors text[])
 RETURNS bigint
 LANGUAGE sql
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
 SET enable_hashjoin TO 'on'
 SET jit TO 'off'
AS $function$
    WITH written AS (
        INSERT INTO securepush.deliveries (id, notification_id, device_id, platform, priority, expires_at, urgency,
            collapse_id, traceparent, run_at, state, attempts, last_error, created_at, claimed_at)
        SELECT i.id, i.notification_id, i.device_id, i.platform, n.priority, n.expires_at, n.urgency,
               securepush.collapse_digest(n.user_id, n.collapse_key), n.traceparent, w.run_at, 'pending', w.attempts,
               w.error, p_lease.claimed_at, p_lease.claimed_at
        FROM unnest(p_ids, p_run_at, p_attempts, p_errors) AS w(id, run_at, attempts, error)
        JOIN securepush.claim_items(p_lease) i ON i.id = w.id
        JOIN securepush.notifications n ON n.id = i.notification_id
        RETURNING 1
    )
    SELECT count(*) FROM written
$function$;
REVOKE ALL ON FUNCTION securepush.requeue_claimed(p_lease securepush.claims, p_ids uuid[],
    p_run_at timestamp with time zone[], p_attempts integer[], p_errors text[]) FROM PUBLIC;
