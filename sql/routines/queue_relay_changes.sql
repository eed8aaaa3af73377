-- securepush.queue_relay_changes: routine file (docs/sql.md).
--
-- Queues the relay changes of a device row: a bind for an active device's token, a release for a token
-- an active device gave up (token changed, deactivated, deleted).
CREATE OR REPLACE FUNCTION securepush.queue_relay_changes()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush'
 SET jit TO 'off'
AS $function$
DECLARE
    relayed text[] := securepush.relay_platforms();
BEGIN
    IF cardinality(relayed) = 0 THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.active AND OLD.platform = ANY (relayed)
       AND (TG_OP = 'DELETE' OR NOT NEW.active OR NEW.token IS DISTINCT FROM OLD.token) THEN
        INSERT INTO securepush.relay_outbox (platform, token, action) VALUES (OLD.platform, OLD.token, 'release');
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.active AND NEW.platform = ANY (relayed)
       AND (TG_OP = 'INSERT' OR NOT OLD.active OR NEW.token IS DISTINCT FROM OLD.token) THEN
        INSERT INTO securepush.relay_outbox (platform, token, action) VALUES (NEW.platform, NEW.token, 'bind');
    END IF;
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.queue_relay_changes() FROM PUBLIC;
