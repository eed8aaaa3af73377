-- securepush_relay.prune: routine file (docs/sql.md).
--
-- Prunes what is no longer needed: request ids past their expiry, usage older than two days, and audit rows older
-- than 90 days (issue 48: the audit was never pruned, and re-binding writes a row per token).
CREATE OR REPLACE FUNCTION securepush_relay.prune()
 RETURNS integer
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush_relay'
AS $function$
    WITH ids AS (DELETE FROM securepush_relay.request_ids WHERE expires_at < now() RETURNING 1),
         old AS (DELETE FROM securepush_relay.usage WHERE minute < now() - interval '2 days' RETURNING 1),
         audited AS (DELETE FROM securepush_relay.audit WHERE at < now() - interval '90 days' RETURNING 1)
    SELECT ((SELECT count(*) FROM ids) + (SELECT count(*) FROM old) + (SELECT count(*) FROM audited))::integer
$function$;
REVOKE ALL ON FUNCTION securepush_relay.prune() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush_relay.prune() TO securepush_relay_service;
