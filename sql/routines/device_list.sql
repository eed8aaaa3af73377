-- securepush.device_list: routine file (docs/sql.md).
-- 0.1.0's listing, kept so that the previous release's API processes keep working during a rolling upgrade:
-- since migration 029 a view of device_list_page in the old shape (the session as a first row with the item
-- columns NULL, then the page's rows in order). Drop it in a later release.
CREATE OR REPLACE FUNCTION securepush.device_list(p_device uuid, p_secret_hash bytea, p_throttle_keys text[], p_unread_only boolean, p_limit integer, p_after_micros bigint, p_after_id uuid, p_with_payloads boolean)
 RETURNS TABLE(user_id text, blocked_for double precision, id uuid, created_at timestamp with time zone, read_at timestamp with time zone, micros bigint, payload text, category text, preview text)
 LANGUAGE sql SET jit TO 'off'
AS $function$
    WITH rows AS MATERIALIZED (
        SELECT r.*, row_number() OVER () AS position
        FROM securepush.device_list_page(p_device, p_secret_hash, p_throttle_keys, p_unread_only, p_limit, p_after_micros,
                                         p_after_id, p_with_payloads) r
    ),
    listing AS (
        (SELECT 0::bigint AS position, r.user_id, r.blocked_for, NULL::uuid AS id, NULL::timestamptz AS created_at,
                NULL::timestamptz AS read_at, NULL::bigint AS micros, NULL::text AS payload, NULL::text AS category, NULL::text AS preview
         FROM rows r ORDER BY r.position LIMIT 1)
        UNION ALL
        SELECT r.position, NULL::text, NULL::double precision, r.id, r.created_at, r.read_at, r.micros, r.payload, r.category, r.preview
        FROM rows r WHERE r.id IS NOT NULL
    )
    SELECT l.user_id, l.blocked_for, l.id, l.created_at, l.read_at, l.micros, l.payload, l.category, l.preview
    FROM listing l ORDER BY l.position
$function$;
REVOKE ALL ON FUNCTION securepush.device_list(p_device uuid, p_secret_hash bytea, p_throttle_keys text[], p_unread_only boolean, p_limit integer, p_after_micros bigint, p_after_id uuid, p_with_payloads boolean) FROM PUBLIC;
