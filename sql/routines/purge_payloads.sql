-- securepush.purge_payloads: routine file (docs/sql.md).
--
-- The payload purge picks its batch first and then updates those rows by primary key. Its first form,
-- `id IN (SELECT ... LIMIT batch FOR UPDATE SKIP LOCKED)`, let the planner (statistics stale after a
-- bulk insert) rescan the subquery for every row: a purge ran for minutes at full CPU.
CREATE OR REPLACE FUNCTION securepush.purge_payloads(after_read interval DEFAULT NULL::interval, batch integer DEFAULT 10000)
 RETURNS integer
 LANGUAGE sql SET jit TO 'off'
AS $function$
    WITH purged AS (
        UPDATE securepush.notifications n SET payload = NULL, purged_at = now()
        WHERE n.id = ANY (ARRAY(
            SELECT id FROM securepush.notifications
            WHERE purged_at IS NULL
              AND (expires_at <= now() OR (after_read IS NOT NULL AND read_at <= now() - after_read))
            LIMIT batch
            FOR UPDATE SKIP LOCKED
        ))
        RETURNING 1
    )
    SELECT count(*)::integer FROM purged
$function$;
REVOKE ALL ON FUNCTION securepush.purge_payloads(after_read interval, batch integer) FROM PUBLIC;
