-- securepush_relay.prune: routine file (docs/sql.md).
--
-- Prunes what is no longer needed: request ids past their expiry, usage older than two days.
CREATE OR REPLACE FUNCTION securepush_relay.prune()
 RETURNS integer
 LANGUAGE sql SET search_path TO 'pg_catalog', 'securepush_relay'
AS $function$
    WITH ids AS (DELETE FROM securepush_relay.request_ids WHERE expires_at < now() RETURNING 1),
         old AS (DELETE FROM securepush_relay.usage WHERE minute < now() - interval '2 days' RETURNING 1)
    SELECT ((SELECT count(*) FROM ids) + (SELECT count(*) FROM old))::integer
$function$;
REVOKE ALL ON FUNCTION securepush_relay.prune() FROM PUBLIC;
