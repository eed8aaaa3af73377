-- securepush.fetch_for_device: routine file (docs/sql.md).
-- A device fetches the notifications `p_ids` of its user: each live one is marked read (by this device) and its
-- first fetch recorded, unless another transaction holds it (then it is answered as it stands, unmarked).
CREATE OR REPLACE FUNCTION securepush.fetch_for_device(p_user text, p_device uuid, p_ids uuid[])
 RETURNS TABLE(id uuid, owned boolean, live boolean, payload text, created_at timestamp with time zone,
    read_at timestamp with time zone, category text, preview text)
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH readable AS (
        SELECT n.id, n.payload::text AS payload, n.created_at, n.read_at, n.category, n.preview::text AS preview
        FROM securepush.notifications n
        WHERE n.id = ANY(p_ids) AND n.user_id = p_user AND n.expires_at > now() AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
    ),
    -- Those of them no other transaction holds. A producer's cancel() left open in its transaction must not
    -- hold a device's listing until the statement's deadline (issue 47, item 2): a held notification is
    -- answered as it stands, unmarked (a later read marks it), as the batched reads do (device_fetch_requests).
    free AS (
        SELECT n.id FROM securepush.notifications n
        WHERE n.id = ANY(ARRAY(SELECT r.id FROM readable r))
        FOR NO KEY UPDATE OF n SKIP LOCKED
    ),
    marked AS (
        UPDATE securepush.notifications n
        SET read_at = coalesce(n.read_at, now()), read_by_device = coalesce(n.read_by_device, p_device)
        WHERE n.id = ANY(ARRAY(SELECT f.id FROM free f)) AND n.user_id = p_user AND n.expires_at > now()
          AND n.purged_at IS NULL
          AND (n.deliver_at IS NULL OR n.deliver_at <= now())
        RETURNING n.id, n.payload::text AS payload, n.created_at, n.read_at, n.category, n.preview::text AS preview
    ),
    answered AS (
        SELECT * FROM marked
        UNION ALL
        SELECT r.* FROM readable r WHERE r.id NOT IN (SELECT f.id FROM free f)
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
    SELECT w.id, a.id IS NOT NULL OR d.id IS NOT NULL, a.id IS NOT NULL, a.payload, a.created_at, a.read_at,
        a.category, a.preview
    FROM unnest(p_ids) WITH ORDINALITY AS w(id, ord)
    LEFT JOIN answered a ON a.id = w.id
    LEFT JOIN dead d ON d.id = w.id
    ORDER BY w.ord;
END
$function$;
REVOKE ALL ON FUNCTION securepush.fetch_for_device(p_user text, p_device uuid, p_ids uuid[]) FROM PUBLIC;
