-- securepush.claim_outcomes: routine file (docs/sql.md).
--
-- The items of the lease p_lease that the outcomes p_ids/p_outcomes end (every outcome but 'retry'), with what
-- complete_deliveries writes to the history for each. A hash join of the lease's items and the outcomes: the
-- completion turns hash joins off for its delivery rows, and compared pair by pair a batch of 500 took 39 ms of
-- a completion (5 ms with delivery rows before 046).
CREATE OR REPLACE FUNCTION securepush.claim_outcomes(p_lease securepush.claims, p_ids uuid[], p_outcomes text[],
    p_infos text[], p_answered_ago_us bigint[])
 RETURNS TABLE(id uuid, notification_id uuid, device_id uuid, platform text, outcome text, info text,
    answered_ago_us bigint)
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
 SET enable_hashjoin TO 'on'
 SET jit TO 'off'
AS $function$
    SELECT i.id, i.notification_id, i.device_id, i.platform, r.outcome, r.info, r.answered_ago_us
    FROM securepush.claim_items(p_lease) i
    JOIN unnest(p_ids, p_outcomes, p_infos, p_answered_ago_us) AS r(id, outcome, info, answered_ago_us)
        ON r.id = i.id
    WHERE r.outcome <> 'retry'
$function$;
REVOKE ALL ON FUNCTION securepush.claim_outcomes(p_lease securepush.claims, p_ids uuid[], p_outcomes text[],
    p_infos text[], p_answered_ago_us bigint[]) FROM PUBLIC;
