-- securepush.device_fetch: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.device_fetch(p_device uuid, p_secret_hash bytea, p_throttle_keys text[],
    p_ids uuid[])
 RETURNS TABLE(user_id text, blocked_for double precision, id uuid, owned boolean, live boolean, payload text,
    created_at timestamp with time zone, read_at timestamp with time zone, category text, preview text)
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
#variable_conflict use_column
DECLARE
    auth record;
BEGIN
    SELECT c.user_id, c.blocked_for INTO auth FROM securepush.device_check(p_device, p_secret_hash, p_throttle_keys) c;
    RETURN QUERY SELECT auth.user_id, auth.blocked_for, NULL::uuid, NULL::boolean, NULL::boolean, NULL::text,
                        NULL::timestamptz, NULL::timestamptz, NULL::text, NULL::text;
    IF auth.user_id IS NULL OR coalesce(cardinality(p_ids), 0) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT NULL::text, NULL::double precision, f.id, f.owned, f.live, f.payload, f.created_at, f.read_at,
        f.category,
                        f.preview
                 FROM securepush.fetch_for_device(auth.user_id, p_device, p_ids) f;
END
$function$;
REVOKE ALL ON FUNCTION securepush.device_fetch(p_device uuid, p_secret_hash bytea, p_throttle_keys text[],
    p_ids uuid[]) FROM PUBLIC;
