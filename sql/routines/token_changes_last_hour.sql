-- securepush.token_changes_last_hour: routine file (docs/sql.md).
--
-- The user's registrations and token changes of the last hour (one budget), and the oldest of them: each event
-- counted through its own partial index (audit_log_registrations_idx, audit_log_token_updates_idx).
CREATE OR REPLACE FUNCTION securepush.token_changes_last_hour(p_user text, OUT recent integer,
    OUT oldest timestamp with time zone)
 RETURNS record
 LANGUAGE sql
 STABLE
AS $function$
    SELECT (r.n + t.n)::integer, least(r.oldest, t.oldest)
    FROM (SELECT count(*) AS n, min(a.at) AS oldest FROM securepush.audit_log a
          WHERE a.event = 'device_registered' AND a.user_id = p_user AND a.at > now() - interval '1 hour') r,
         (SELECT count(*) AS n, min(a.at) AS oldest FROM securepush.audit_log a
          WHERE a.event = 'device_token_updated' AND a.user_id = p_user AND a.at > now() - interval '1 hour') t
$function$;
REVOKE ALL ON FUNCTION securepush.token_changes_last_hour(p_user text, OUT recent integer,
    OUT oldest timestamp with time zone) FROM PUBLIC;
