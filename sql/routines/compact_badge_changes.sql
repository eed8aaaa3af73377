-- securepush.compact_badge_changes: routine file (docs/sql.md).
--
-- Folds the badge rows (securepush.fold_badges, since 051; before, only rows with one end folded, so a user's
-- walk was as long as their unread count) of the next p_users users after p_after (in user order; NULL: from
-- the first): the sweep of every user that each process's maintenance runs.
-- Returns the last user looked at, or NULL when there was none after p_after (the next round starts over).
CREATE OR REPLACE FUNCTION securepush.compact_badge_changes(p_after text, p_users integer)
 RETURNS text
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET jit TO 'off'
AS $function$
DECLARE
    users text[];
BEGIN
    -- The next users in index order, one index probe each.
    WITH RECURSIVE next_user(user_id, n) AS (
        (SELECT b.user_id, 1 FROM securepush.badge_changes b
         WHERE p_after IS NULL OR b.user_id > p_after ORDER BY b.user_id LIMIT 1)
        UNION ALL
        SELECT (SELECT b.user_id FROM securepush.badge_changes b
            WHERE b.user_id > nu.user_id ORDER BY b.user_id LIMIT 1),
               nu.n + 1
        FROM next_user nu WHERE nu.n < p_users AND nu.user_id IS NOT NULL
    )
    SELECT array_agg(nu.user_id ORDER BY nu.user_id) INTO users FROM next_user nu WHERE nu.user_id IS NOT NULL;
    IF users IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM securepush.fold_badges(users);
    RETURN users[cardinality(users)];
END
$function$;
REVOKE ALL ON FUNCTION securepush.compact_badge_changes(p_after text, p_users integer) FROM PUBLIC;
