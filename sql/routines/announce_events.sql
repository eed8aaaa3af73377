-- securepush.announce_events: routine file (docs/sql.md).
--
-- The wake-up of the outcome feed: NOTIFY securepush_events with the feed's head (a cursor, never an id or a
-- word) when it moved past `last_head`; returns the head. The dispatchers call it a few times a second
-- (EventAnnouncer), so that no producer's, dispatcher's or reader's commit carries a NOTIFY: a NOTIFY
-- serialises commits on a global lock until they are flushed (docs/scaling.md § Producers and wake-ups).
CREATE OR REPLACE FUNCTION securepush.announce_events(last_head text)
 RETURNS text
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    head text := securepush.events_head();
BEGIN
    IF head <> '0:0' AND head IS DISTINCT FROM last_head THEN
        PERFORM pg_notify('securepush_events', head);
    END IF;
    RETURN head;
END
$function$;
REVOKE ALL ON FUNCTION securepush.announce_events(last_head text) FROM PUBLIC;
