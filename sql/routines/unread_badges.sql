-- securepush.unread_badges: routine file (docs/sql.md).
--
-- Each of p_users' badge now: the sum of their rows in effect now (from effective_at until ends_at), within
-- 0 ... p_limit, one walk of each user's entries in `badge_changes_user_idx`. One call for a claim's users (since
-- 055): securepush.unread_badge, called once per user, started its statement's executor for each (a claim of 500
-- deliveries to 500 users paid 500 calls); here one statement per claim probes the index once per user.
CREATE OR REPLACE FUNCTION securepush.unread_badges(p_users text[], p_limit integer)
 RETURNS TABLE(user_id text, badge bigint)
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET jit TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT u.user_id,
           least(greatest(coalesce((SELECT sum(b.change) FROM securepush.badge_changes b
                                    WHERE b.user_id = u.user_id AND b.effective_at <= now() AND b.ends_at > now()),
                                   0), 0), p_limit)::bigint
    FROM unnest(p_users) AS u(user_id);
END
$function$;
REVOKE ALL ON FUNCTION securepush.unread_badges(p_users text[], p_limit integer) FROM PUBLIC;
