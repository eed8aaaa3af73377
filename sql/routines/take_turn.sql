-- securepush.take_turn: routine file (docs/sql.md).
--
-- Whether this transaction now holds the turn of a queue that one process at a time hands over in order
-- ('webhook': the outcome webhook's batches; 'relay_outbox': the relay's registrations), false when another
-- transaction holds it. The turn is a table lock (EXCLUSIVE, NOWAIT) on an empty table no producer may
-- lock, not an advisory key any login could hold (issue 47); it assigns no transaction id, so the holder,
-- which waits for a receiver's answer before it writes, holds back no reader of events_after.
CREATE OR REPLACE FUNCTION securepush.take_turn(p_queue text)
 RETURNS boolean
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
BEGIN
    CASE p_queue
        WHEN 'webhook' THEN LOCK TABLE securepush.webhook_turn IN EXCLUSIVE MODE NOWAIT;
        WHEN 'relay_outbox' THEN LOCK TABLE securepush.relay_outbox_turn IN EXCLUSIVE MODE NOWAIT;
    END CASE;
    RETURN true;
EXCEPTION WHEN lock_not_available THEN
    RETURN false;
END
$function$;
REVOKE ALL ON FUNCTION securepush.take_turn(p_queue text) FROM PUBLIC;
