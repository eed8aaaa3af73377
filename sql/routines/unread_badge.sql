-- securepush.unread_badge: routine file (docs/sql.md).
--
-- A user's badge now (producers call it: docs/producers.md), as a claim sees it: securepush.unread_badges for
-- one user, where the rule has its one home (since 055; before, this function was the rule, and the claim called
-- it once per user). PL/pgSQL since 050: its statement is planned once per session.
CREATE OR REPLACE FUNCTION securepush.unread_badge(p_user text, p_limit integer)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
    RETURN (SELECT u.badge FROM securepush.unread_badges(ARRAY[p_user], p_limit) u);
END
$function$;
REVOKE ALL ON FUNCTION securepush.unread_badge(p_user text, p_limit integer) FROM PUBLIC;
