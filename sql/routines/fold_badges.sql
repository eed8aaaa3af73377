-- securepush.fold_badges: routine file (docs/sql.md).
--
-- Folds the badge rows of p_users (since 051). Each user's rows in effect (effective_at <= now) become one base
-- row (-infinity to infinity) holding their sum, and each of them that ends later leaves a step at its end (its
-- change undone from ends_at on): from now on the badge is the same, and a claim walks (unread_badge) only the
-- base, the rows written since and the steps that came due since. Rows that ended go. A user is folded when
-- more than two rows are in effect or one of them ended: a walk of one or two rows is as short as a fold would
-- make it (a broadcast's recipient, one notification and its read, is not rewritten). A new step meets the
-- future steps already at its end (a read's step cancels its notification's); no other future row is looked
-- at, so a fold costs what came due since the last. A dispatcher folds the users it pushed to every second;
-- maintenance sweeps every user (compact_badge_changes).
-- Safe beside any writer and any other fold: a row is deleted once and its change re-inserted by the statement
-- that deleted it. Returns how many users had rows to fold.
CREATE OR REPLACE FUNCTION securepush.fold_badges(p_users text[])
 RETURNS integer
 LANGUAGE sql
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
 SET jit TO 'off'
AS $function$
    WITH folding AS (
        SELECT b.user_id FROM securepush.badge_changes b
        WHERE b.user_id = ANY(p_users) AND b.effective_at <= now()
        GROUP BY b.user_id
        HAVING count(*) > 2 OR bool_or(b.ends_at <= now())
    ),
    gone AS (
        DELETE FROM securepush.badge_changes b
        USING folding f
        WHERE b.user_id = f.user_id AND b.effective_at <= now()
        RETURNING b.user_id, b.change, b.ends_at
    ),
    met AS (
        DELETE FROM securepush.badge_changes b
        USING (SELECT DISTINCT g.user_id, g.ends_at FROM gone g WHERE g.ends_at > now() AND g.ends_at < 'infinity') e
        WHERE b.user_id = e.user_id AND b.effective_at = e.ends_at AND b.ends_at = 'infinity'
        RETURNING b.user_id, b.change, b.effective_at
    ),
    written AS (
        INSERT INTO securepush.badge_changes (user_id, change, effective_at, ends_at)
        SELECT s.user_id, sum(s.change), s.effective_at, 'infinity'
        FROM (SELECT g.user_id, g.change, '-infinity'::timestamptz AS effective_at FROM gone g WHERE g.ends_at > now()
              UNION ALL
              SELECT g.user_id, -g.change, g.ends_at FROM gone g WHERE g.ends_at > now() AND g.ends_at < 'infinity'
              UNION ALL
              SELECT m.user_id, m.change, m.effective_at FROM met m) s
        GROUP BY s.user_id, s.effective_at
        HAVING sum(s.change) <> 0
    )
    SELECT count(*)::integer FROM folding
$function$;
REVOKE ALL ON FUNCTION securepush.fold_badges(p_users text[]) FROM PUBLIC;
