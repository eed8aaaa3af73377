-- securepush.complete_deliveries: routine file (docs/sql.md).
--
-- The completion of a claimed batch as a function with plans that do not depend on statistics (as 010 did
-- for the claim).
--
-- `ops/bench` found the drain spending 43 of every 62 ms per batch of 500 in the statement that records
-- outcomes: analysed while every `lease_token` was NULL, the table's statistics made "this lease's rows"
-- look like one row, so the planner scanned all deliveries for it and joined them to the 500 outcomes in a
-- nested loop (250,000 comparisons). Here every delivery is found by primary key, whatever the statistics.
--
-- Per delivery, `p_outcomes[i]` is an outcome word of `delivery_log_outcome_valid` (or `retry`). A retry goes
-- back to pending after `p_delays_ms[i]`; any other outcome leaves the queue for the history, with
-- `p_infos[i]` as the provider's message id (sent) or the error (otherwise), and `accepted_at` the answer's
-- time (`p_answered_ago_us[i]` before now). A `token_invalid` retires the device unless it re-registered
-- after the claim, and cancels its other pending deliveries. A delivery its fan-out wrote claimed logs its
-- 'queued' event in its outcome row (queued_with_outcome; a retry writes it through
-- securepush.delivery_queued_late). Since 046 the deliveries a claim's fan-out pushes at once are items of
-- its lease (securepush.claims), not rows: the lease is taken, each item's outcome written to the history
-- (a retry becomes a pending row, securepush.requeue_claimed), and the items without an outcome here are
-- kept leased (securepush.claim_rest). Only rows and leases still held by `p_token` are touched;
-- returns how many were. Its statements are planned once per session (054): PL/pgSQL kept custom plans and
-- planned the outcomes' statement again at every call (0.42 ms of a batch's 3.9; ops/wal-budget's plans).
CREATE OR REPLACE FUNCTION securepush.complete_deliveries(p_token uuid, p_ids uuid[], p_outcomes text[],
    p_delays_ms bigint[], p_infos text[], p_answered_ago_us bigint[])
 RETURNS bigint
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET jit TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    touched bigint;
    lease securepush.claims;
    requeued bigint := 0;
BEGIN
    DELETE FROM securepush.claims c WHERE c.token = p_token RETURNING c.* INTO lease;
    IF lease.token IS NOT NULL THEN
        WITH r AS (
            SELECT r.id, r.delay_ms, r.info FROM unnest(p_ids, p_outcomes, p_delays_ms, p_infos) AS r(id, outcome,
                delay_ms, info)
            WHERE r.outcome = 'retry'
        )
        SELECT securepush.requeue_claimed(lease, array_agg(r.id),
                   array_agg(now() + r.delay_ms * interval '1 millisecond'), array_agg(1),
                   array_agg(NULLIF(r.info, '')))
        INTO requeued
        FROM r HAVING count(*) > 0;
        PERFORM securepush.claim_rest(lease, p_ids);
    END IF;
    WITH r AS MATERIALIZED (
        SELECT * FROM unnest(p_ids, p_outcomes, p_delays_ms, p_infos, p_answered_ago_us)
            AS r(id, outcome, delay_ms, info, answered_ago_us)
    ),
    retried AS (
        UPDATE securepush.deliveries d
        SET state = 'pending', run_at = now() + r.delay_ms * interval '1 millisecond', last_error = NULLIF(r.info, ''),
            lease_token = NULL, lease_expires_at = NULL, claimed_by = NULL
        FROM r
        WHERE r.outcome = 'retry' AND d.id = r.id AND d.lease_token = p_token
        RETURNING d.id
    ),
    finished AS (
        DELETE FROM securepush.deliveries d
        USING r
        WHERE r.outcome <> 'retry' AND d.id = r.id AND d.lease_token = p_token
        RETURNING d.id, d.notification_id, d.device_id, d.platform, r.outcome, d.attempts, r.info, d.created_at,
                  d.claimed_at, r.answered_ago_us, d.kind, d.queued_logged
    ),
    -- The lease's items that ended here ('queued' is carried by the outcome row, as its fan-out wrote none).
    ended AS (
        SELECT * FROM finished
        UNION ALL
        SELECT o.id, o.notification_id, o.device_id, o.platform, o.outcome, 1, o.info, lease.claimed_at,
               lease.claimed_at, o.answered_ago_us, 'notify', false
        FROM securepush.claim_outcomes(lease, p_ids, p_outcomes, p_infos, p_answered_ago_us) o
    ),
    logged AS (
        INSERT INTO securepush.delivery_log
            (id, notification_id, device_id, platform, outcome, attempts, provider_message_id, last_error, created_at,
             accepted_at, kind, queued_with_outcome)
        SELECT f.id, f.notification_id, f.device_id, f.platform, f.outcome, f.attempts,
               CASE WHEN f.outcome = 'sent' THEN NULLIF(f.info, '') END,
               CASE WHEN f.outcome <> 'sent' THEN NULLIF(f.info, '') END,
               f.created_at,
               CASE WHEN f.outcome = 'sent' THEN now() - f.answered_ago_us * interval '1 microsecond' END, f.kind,
               NOT f.queued_logged
        FROM ended f
    ),
    dead AS (
        -- Not a device that re-registered (new token owner, fresh secret) after this push was attempted.
        UPDATE securepush.devices dev
        SET active = false, updated_at = now(), deactivated_reason = 'token_invalid'
        FROM ended f
        WHERE f.outcome = 'token_invalid' AND dev.id = f.device_id AND dev.active
          AND dev.updated_at <= coalesce(f.claimed_at, now())
        RETURNING dev.id
    ),
    cancelled AS (
        DELETE FROM securepush.deliveries d
        WHERE d.device_id = ANY(ARRAY(SELECT dead.id FROM dead)) AND d.state = 'pending'
        RETURNING d.id, d.notification_id, d.device_id, d.platform, d.attempts, d.created_at, d.kind
    ),
    cancel_logged AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error,
            created_at, kind)
        SELECT c.id, c.notification_id, c.device_id, c.platform, 'cancelled', c.attempts, 'device token invalid',
            c.created_at, c.kind
        FROM cancelled c
    )
    SELECT (SELECT count(*) FROM retried) + (SELECT count(*) FROM ended) INTO touched;
    RETURN touched + coalesce(requeued, 0);
END
$function$;
REVOKE ALL ON FUNCTION securepush.complete_deliveries(p_token uuid, p_ids uuid[], p_outcomes text[],
    p_delays_ms bigint[], p_infos text[], p_answered_ago_us bigint[]) FROM PUBLIC;
