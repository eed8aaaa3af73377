-- securepush.prune_audit_log: routine file (docs/sql.md).
--
-- Deletes audit rows older than `retention` (the only way rows leave the log).
CREATE OR REPLACE FUNCTION securepush.prune_audit_log(retention interval)
 RETURNS integer
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    removed integer;
BEGIN
    PERFORM set_config('securepush.pruning_audit_log', 'on', true);
    DELETE FROM securepush.audit_log WHERE at < now() - retention;
    GET DIAGNOSTICS removed = ROW_COUNT;
    PERFORM set_config('securepush.pruning_audit_log', 'off', true);
    RETURN removed;
END
$function$;
REVOKE ALL ON FUNCTION securepush.prune_audit_log(retention interval) FROM PUBLIC;
