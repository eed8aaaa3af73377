-- securepush.device_fetch_batch: routine file (docs/sql.md).
-- 0.1.0's batch fetch, kept so that the previous release's API processes keep working during a rolling
-- upgrade: since migration 029 a view of device_fetch_requests in the old shape (each request's session as
-- its own row with the item columns NULL, then one row per requested id). Drop it in a later release.
CREATE OR REPLACE FUNCTION securepush.device_fetch_batch(p_devices uuid[], p_hashes bytea[], p_keys text[],
    p_key_req integer[], p_req integer[], p_ids uuid[])
 RETURNS TABLE(req integer, user_id text, blocked_for double precision, id uuid, owned boolean, live boolean,
    payload text, created_at timestamp with time zone, read_at timestamp with time zone, category text, preview text)
 LANGUAGE sql
 SET jit TO 'off'
AS $function$
    WITH rows AS MATERIALIZED (
        SELECT * FROM securepush.device_fetch_requests(p_devices, p_hashes, p_keys, p_key_req, p_req, p_ids)
    )
    SELECT DISTINCT ON (r.req) r.req, r.user_id, r.blocked_for,
           NULL::uuid, NULL::boolean, NULL::boolean, NULL::text, NULL::timestamptz, NULL::timestamptz, NULL::text,
               NULL::text
    FROM rows r
    UNION ALL
    SELECT r.req, NULL::text, NULL::double precision, r.id, r.owned, r.live, r.payload, r.created_at, r.read_at,
        r.category, r.preview
    FROM rows r WHERE r.id IS NOT NULL
$function$;
REVOKE ALL ON FUNCTION securepush.device_fetch_batch(p_devices uuid[], p_hashes bytea[], p_keys text[],
    p_key_req integer[], p_req integer[], p_ids uuid[]) FROM PUBLIC;
