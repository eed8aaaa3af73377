-- securepush.compact_badge_changes: routine file (docs/sql.md).
--
-- Folds the badge rows of the next p_users users after p_after (in user order; NULL: from the first):
-- each user's rows in effect with one end become one, future rows of one interval become one, and sums of zero
-- and rows that ended go.
-- Returns the last user looked at, or NULL when there was none after p_after (the next round starts over).
-- Safe beside any writer and any other compaction: a row is deleted once and its change re-inserted by the
-- statement that deleted it.
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
    WITH candidates AS (
        SELECT b.user_id, b.change, b.effective_at, b.ends_at,
               CASE WHEN b.effective_at <= now() THEN '-infinity'::timestamptz ELSE b.effective_at END AS bucket
        FROM securepush.badge_changes b WHERE b.user_id = ANY(users)
    ),
    -- What is worth rewriting: several rows of one interval, a sum of zero, effective rows not yet folded, or
    -- rows that ended (they count no more).
    groups AS (
        SELECT c.user_id, c.bucket, c.ends_at
        FROM candidates c GROUP BY c.user_id, c.bucket, c.ends_at
        HAVING count(*) > 1 OR sum(c.change) = 0 OR bool_or(c.effective_at <> c.bucket) OR c.ends_at <= now()
    ),
    gone AS (
        DELETE FROM securepush.badge_changes b
        USING groups g
        WHERE b.user_id = g.user_id AND b.user_id = ANY(users) AND b.ends_at = g.ends_at
          AND (CASE WHEN b.effective_at <= now() THEN '-infinity'::timestamptz ELSE b.effective_at END) = g.bucket
        RETURNING b.user_id, b.change, g.bucket, g.ends_at
    )
    INSERT INTO securepush.badge_changes (user_id, change, effective_at, ends_at)
    SELECT gone.user_id, sum(gone.change), gone.bucket, gone.ends_at FROM gone
    WHERE gone.ends_at > now()
    GROUP BY gone.user_id, gone.bucket, gone.ends_at
    HAVING sum(gone.change) <> 0;
    RETURN users[cardinality(users)];
END
$function$;
REVOKE ALL ON FUNCTION securepush.compact_badge_changes(p_after text, p_users integer) FROM PUBLIC;
