-- securepush.unread_badge: routine file (docs/sql.md).
--
-- A user's badge now: the sum of the rows in effect now (from effective_at until ends_at), within 0 ... p_limit
-- (one walk of the user's entries in `badge_changes_user_idx`; the claim calls it under its own plan settings).
-- PL/pgSQL since 050: its statement is planned once per session, where this SQL function (an aggregate, so never
-- inlined) was planned again in every claim.
CREATE OR REPLACE FUNCTION securepush.unread_badge(p_user text, p_limit integer)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    RETURN (SELECT least(greatest(coalesce(sum(b.change), 0), 0), p_limit)::bigint
            FROM securepush.badge_changes b
            WHERE b.user_id = p_user AND b.effective_at <= now() AND b.ends_at > now());
END
$function$;
REVOKE ALL ON FUNCTION securepush.unread_badge(p_user text, p_limit integer) FROM PUBLIC;
