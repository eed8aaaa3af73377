-- securepush.claim_deliveries: routine file (docs/sql.md).
--
-- Claims up to p_limit due deliveries of p_platforms, highest priority and oldest first, skipping rows others
-- hold; then fans out what producers committed (as many notifications as it may still claim, one at least and
-- 1,000 at most: securepush.fan_out_queued), which leases up to the rest of p_limit of the new due deliveries
-- of p_platforms to this call: one securepush.claims row (keyed by p_token) for all of them, not a row per
-- delivery (since 046). Every delivery row this call claimed carries its token and one lease end, by which the
-- result finds them (deliveries_lease_idx), beside its lease's items (securepush.claimed_items). A call that
-- finds no work rescues leases past their end (securepush.rescue_claims), so that they are rescued whatever build
-- runs the maintenance.
-- A fan-out wakes the dispatchers that wait (those of other platforms have work now, and a claim that found
-- nothing due fans out the next batch), after this one has said whether it found work.
CREATE OR REPLACE FUNCTION securepush.claim_deliveries(p_limit integer, p_platforms text[], p_lease_ms bigint,
    p_token uuid, p_worker uuid, p_badge boolean, p_badge_limit integer, p_sealed boolean DEFAULT false)
 RETURNS TABLE(id uuid, notification_id uuid, device_id uuid, platform text, token text, options text, active boolean,
    expires_at timestamp with time zone, priority smallint, attempts integer, unread bigint, clear_ids uuid[],
    urgency text, collapse_id text, preview text, seal_public bytea, seal_auth bytea, user_id text, traceparent text)
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET enable_sort TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET jit TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
DECLARE
    claimed_rows integer;
    fanned_out integer;
    lease_until timestamptz := now() + p_lease_ms * interval '1 millisecond';
BEGIN
    WITH c AS MATERIALIZED (
        SELECT d.id FROM securepush.deliveries d
        WHERE d.state = 'pending' AND d.run_at <= now() AND d.platform = ANY(p_platforms)
        ORDER BY d.priority DESC, d.run_at, d.id
        LIMIT p_limit
        FOR UPDATE SKIP LOCKED
    )
    UPDATE securepush.deliveries d
    SET state = 'claimed', attempts = d.attempts + 1, lease_token = p_token, claimed_at = now(),
        lease_expires_at = lease_until, claimed_by = p_worker
    FROM c
    WHERE d.id = c.id;
    GET DIAGNOSTICS claimed_rows = ROW_COUNT;
    -- As many notifications as it may still claim deliveries (one at least, 1,000 at most): a fan-out sized to
    -- the claim writes its due deliveries claimed, where a larger one would leave rows for the next claim to
    -- update.
    fanned_out := securepush.fan_out_queued(least(greatest(p_limit - claimed_rows, 1), 1000), p_platforms,
                                            greatest(p_limit - claimed_rows, 0), lease_until, p_token, p_worker);
    RETURN QUERY
    WITH claimed AS (
        SELECT d.id, d.notification_id, d.device_id, d.platform, dev.token, dev.options::text AS options, dev.active,
               d.expires_at, d.priority, d.attempts, dev.user_id, d.clear_ids, d.urgency, d.collapse_id,
               dev.seal_public, dev.seal_auth, d.traceparent
        FROM securepush.deliveries d
        JOIN securepush.devices dev ON dev.id = d.device_id
        WHERE claimed_rows > 0 AND d.state = 'claimed' AND d.lease_expires_at = lease_until
          AND d.lease_token = p_token
        UNION ALL
        SELECT i.id, i.notification_id, i.device_id, i.platform, dev.token, dev.options::text, dev.active,
               n.expires_at, n.priority, 1, dev.user_id, NULL::uuid[], n.urgency,
               securepush.collapse_digest(n.user_id, n.collapse_key), dev.seal_public, dev.seal_auth, n.traceparent
        FROM securepush.claimed_items i
        JOIN securepush.notifications n ON n.id = i.notification_id
        JOIN securepush.devices dev ON dev.id = i.device_id
        WHERE fanned_out > 0 AND i.token = p_token
    ),
    -- One call for the claim's users (securepush.unread_badges, 055), not one per user.
    badges AS MATERIALIZED (
        SELECT jsonb_object_agg(u.user_id, u.badge) AS counts
        FROM securepush.unread_badges(ARRAY(SELECT DISTINCT claimed.user_id FROM claimed), p_badge_limit) u
        WHERE p_badge
    )
    SELECT claimed.id, claimed.notification_id, claimed.device_id, claimed.platform, claimed.token, claimed.options,
           claimed.active, claimed.expires_at, claimed.priority, claimed.attempts,
           ((SELECT b.counts FROM badges b) ->> claimed.user_id)::bigint,
           claimed.clear_ids, claimed.urgency, claimed.collapse_id,
           -- Only with the switch on (SECUREPUSH_SEALED_PREVIEWS): off, the subquery never runs and no key leaves.
           CASE WHEN p_sealed AND claimed.clear_ids IS NULL
                THEN (SELECT n.preview::text FROM securepush.notifications n
                      WHERE n.id = claimed.notification_id AND n.payload IS NOT NULL) END,
           CASE WHEN p_sealed THEN claimed.seal_public END, CASE WHEN p_sealed THEN claimed.seal_auth END,
           claimed.user_id, claimed.traceparent
    FROM claimed;
    GET DIAGNOSTICS claimed_rows = ROW_COUNT;
    IF claimed_rows > 0 THEN
        UPDATE securepush.dispatchers d SET awaiting_wakeup = false WHERE d.id = p_worker AND d.awaiting_wakeup;
    END IF;
    IF fanned_out > 0 THEN
        PERFORM securepush.wake_dispatchers();
    ELSIF claimed_rows = 0 AND EXISTS (SELECT 1 FROM securepush.claims c WHERE c.lease_expires_at < now()) THEN
        IF securepush.rescue_claims() > 0 THEN
            PERFORM securepush.wake_dispatchers();
        END IF;
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION securepush.claim_deliveries(p_limit integer, p_platforms text[], p_lease_ms bigint,
    p_token uuid, p_worker uuid, p_badge boolean, p_badge_limit integer, p_sealed boolean) FROM PUBLIC;
