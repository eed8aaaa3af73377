-- securepush.all_producers_visible: routine file (docs/sql.md).
--
-- Whether the session's login sees every producer's notifications (issue 47, item 3): a login granted
-- securepush_operator, or one that is not a producer at all (the schema owner the server runs as). A producer
-- login sees, cancels and resolves idempotency keys of the notifications it enqueued (notifications.producer)
-- and reads only their events. The row policy notifications_own states the operator's half of the rule for
-- the table itself (a policy is created with the table's changes, before any routine).
CREATE OR REPLACE FUNCTION securepush.all_producers_visible()
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
    SELECT pg_catalog.pg_has_role(session_user, 'securepush_operator', 'USAGE')
        OR NOT pg_catalog.pg_has_role(session_user, 'securepush_producer', 'USAGE')
$function$;
REVOKE ALL ON FUNCTION securepush.all_producers_visible() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.all_producers_visible() TO securepush_producer;
