-- securepush.relay_change_pending: routine file (docs/sql.md).
--
-- Whether a change of `p_token` still waits to be handed to the relay.
CREATE OR REPLACE FUNCTION securepush.relay_change_pending(p_platform text, p_token text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'securepush'
AS $function$
    SELECT EXISTS (SELECT 1 FROM securepush.relay_outbox o WHERE o.token = p_token AND o.platform = p_platform)
$function$;
REVOKE ALL ON FUNCTION securepush.relay_change_pending(p_platform text, p_token text) FROM PUBLIC;
