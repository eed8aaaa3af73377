-- securepush.audit: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.audit(event text, user_id text, device_id uuid, reason text DEFAULT NULL::text)
 RETURNS void
 LANGUAGE sql
 SET jit TO 'off'
AS $function$
    INSERT INTO securepush.audit_log (event, user_id, device_id, reason) VALUES (event, user_id, device_id,
        left(reason, 200))
$function$;
REVOKE ALL ON FUNCTION securepush.audit(event text, user_id text, device_id uuid, reason text) FROM PUBLIC;
