-- securepush.prune_auth_failures: routine file (docs/sql.md).
--
-- Deletes throttle rows idle for longer than `idle`.
CREATE OR REPLACE FUNCTION securepush.prune_auth_failures(idle interval)
 RETURNS integer
 LANGUAGE sql
 SET jit TO 'off'
AS $function$
    WITH gone AS (DELETE FROM securepush.auth_failures WHERE last_at < now() - idle AND (blocked_until IS NULL
        OR blocked_until < now()) RETURNING 1)
    SELECT count(*)::integer FROM gone
$function$;
REVOKE ALL ON FUNCTION securepush.prune_auth_failures(idle interval) FROM PUBLIC;
