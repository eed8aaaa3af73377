-- securepush.promote_due_deliveries: routine file (docs/sql.md).
--
-- Makes due scheduled deliveries claimable and wakes the dispatchers; returns how many it promoted.
CREATE OR REPLACE FUNCTION securepush.promote_due_deliveries(batch integer DEFAULT 10000)
 RETURNS integer
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    promoted integer;
BEGIN
    UPDATE securepush.deliveries d SET state = 'pending'
    WHERE d.id = ANY (ARRAY(
        SELECT s.id FROM securepush.deliveries s
        WHERE s.state = 'scheduled' AND s.run_at <= now()
        ORDER BY s.run_at
        LIMIT batch
        FOR UPDATE SKIP LOCKED
    ));
    GET DIAGNOSTICS promoted = ROW_COUNT;
    IF promoted > 0 THEN
        PERFORM securepush.wake_dispatchers();
    END IF;
    RETURN promoted;
END
$function$;
REVOKE ALL ON FUNCTION securepush.promote_due_deliveries(batch integer) FROM PUBLIC;
