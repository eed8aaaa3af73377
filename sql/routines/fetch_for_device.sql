-- securepush.fetch_for_device: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.fetch_for_device(p_user text, p_device uuid, p_ids uuid[])
 RETURNS TABLE(id uuid, owned boolean, live boolean, payload text, created_at timestamp with time zone, read_at timestamp with time zone, category text, preview text)
 LANGUAGE plpgsql SET jit TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH marked AS (
        UPDATE securepush.notifications n
        SET read_at = coalesce(n.read_at, now()), read_by_device = coalesce(n.read_by_device, p_device)
        WHERE n.id = ANY(p_ids) AND n.user_id = p_user AND n.expires_at > now() AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
        RETURNING n.id, n.payload::text AS payload, n.created_at, n.read_at, n.category, n.preview::text AS preview
    ),
    fetched AS (
        INSERT INTO securepush.fetches (notification_id, device_id, platform)
        SELECT m.id, p_device, (SELECT d.platform FROM securepush.devices d WHERE d.id = p_device) FROM marked m
        ON CONFLICT (notification_id, device_id) DO NOTHING
    ),
    dead AS (
        SELECT n.id FROM securepush.notifications n
        WHERE n.id = ANY(p_ids) AND n.user_id = p_user AND NOT (n.expires_at > now() AND n.purged_at IS NULL)
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
    )
    SELECT w.id, m.id IS NOT NULL OR d.id IS NOT NULL, m.id IS NOT NULL, m.payload, m.created_at, m.read_at, m.category, m.preview
    FROM unnest(p_ids) WITH ORDINALITY AS w(id, ord)
    LEFT JOIN marked m ON m.id = w.id
    LEFT JOIN dead d ON d.id = w.id
    ORDER BY w.ord;
END
$function$;
REVOKE ALL ON FUNCTION securepush.fetch_for_device(p_user text, p_device uuid, p_ids uuid[]) FROM PUBLIC;
