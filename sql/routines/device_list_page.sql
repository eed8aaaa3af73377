-- securepush.device_list_page: routine file (docs/sql.md).
-- A device's listing: every row carries the session (user_id, or blocked_for when refused); a refused
-- request or an empty page is one row whose item columns are NULL.
CREATE OR REPLACE FUNCTION securepush.device_list_page(p_device uuid, p_secret_hash bytea, p_throttle_keys text[],
    p_unread_only boolean, p_limit integer, p_after_micros bigint, p_after_id uuid, p_with_payloads boolean)
 RETURNS TABLE(user_id text, blocked_for double precision, id uuid, created_at timestamp with time zone,
    read_at timestamp with time zone, micros bigint, payload text, category text, preview text)
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
#variable_conflict use_column
DECLARE
    auth record;
BEGIN
    SELECT c.user_id, c.blocked_for INTO auth FROM securepush.device_check(p_device, p_secret_hash, p_throttle_keys) c;
    IF auth.user_id IS NULL THEN
        RETURN QUERY SELECT auth.user_id, auth.blocked_for, NULL::uuid, NULL::timestamptz, NULL::timestamptz,
            NULL::bigint,
                            NULL::text, NULL::text, NULL::text;
        RETURN;
    END IF;
    RETURN QUERY
    WITH page AS (
        SELECT n.id, n.created_at, n.read_at, n.category, n.preview, (extract(epoch
            FROM n.created_at) * 1000000)::bigint AS micros,
               row_number() OVER (ORDER BY n.created_at DESC, n.id DESC) AS position
        FROM (
            SELECT n.id, n.created_at, n.read_at, n.category, n.preview::text AS preview
            FROM securepush.notifications n
            WHERE n.user_id = auth.user_id AND n.expires_at > now() AND n.purged_at IS NULL
              AND (n.deliver_at IS NULL OR n.deliver_at <= now())
              AND (NOT p_unread_only OR n.read_at IS NULL)
              AND (p_after_id IS NULL
                   OR (n.created_at, n.id) < ('epoch'::timestamptz + p_after_micros * interval '1 microsecond',
                       p_after_id))
            ORDER BY n.created_at DESC, n.id DESC
            LIMIT p_limit + 1
        ) n
    ),
    fetched AS (
        SELECT f.id, f.live, f.payload, f.read_at
        FROM securepush.fetch_for_device(auth.user_id, p_device,
                                         CASE WHEN p_with_payloads THEN ARRAY(SELECT p.id FROM page p
                                             WHERE p.position <= p_limit)
                                              ELSE '{}'::uuid[] END) f
    )
    SELECT auth.user_id, auth.blocked_for, p.id, p.created_at, coalesce(f.read_at, p.read_at), p.micros,
           CASE WHEN f.live THEN f.payload END, p.category, p.preview
    FROM page p
    LEFT JOIN fetched f ON f.id = p.id
    WHERE NOT p_with_payloads OR p.position > p_limit OR f.live
    ORDER BY p.position;
    IF NOT FOUND THEN
        RETURN QUERY SELECT auth.user_id, auth.blocked_for, NULL::uuid, NULL::timestamptz, NULL::timestamptz,
            NULL::bigint,
                            NULL::text, NULL::text, NULL::text;
    END IF;
END
$function$;
REVOKE ALL ON FUNCTION securepush.device_list_page(p_device uuid, p_secret_hash bytea, p_throttle_keys text[],
    p_unread_only boolean, p_limit integer, p_after_micros bigint, p_after_id uuid,
    p_with_payloads boolean) FROM PUBLIC;
