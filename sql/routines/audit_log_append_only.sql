-- securepush.audit_log_append_only: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.audit_log_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF current_setting('securepush.pruning_audit_log', true) = 'on' AND TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'securepush.audit_log is append-only' USING ERRCODE = '42501';
END
$function$;
REVOKE ALL ON FUNCTION securepush.audit_log_append_only() FROM PUBLIC;
