-- securepush.auth_blocked_for: routine file (docs/sql.md).
--
-- How long each key is still blocked (0 when not): one round trip before authenticating.
CREATE OR REPLACE FUNCTION securepush.auth_blocked_for(keys text[])
 RETURNS double precision
 LANGUAGE sql
 STABLE
AS $function$
    SELECT coalesce(max(extract(epoch FROM blocked_until - now())), 0)::double precision
    FROM securepush.auth_failures
    WHERE key = ANY(keys) AND blocked_until > now()
$function$;
REVOKE ALL ON FUNCTION securepush.auth_blocked_for(keys text[]) FROM PUBLIC;
