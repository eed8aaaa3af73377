-- securepush.register_device: routine file (docs/sql.md).
--
-- The producers' registration function keeps its name and result (003's), now with the rate limit and
-- the re-bind audit of `register_device_checked`.
CREATE OR REPLACE FUNCTION securepush.register_device(user_id text, platform text, token text,
    options jsonb DEFAULT '{}'::jsonb)
 RETURNS TABLE(device_id uuid, device_secret text)
 LANGUAGE sql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
    SELECT r.device_id, r.device_secret FROM securepush.register_device_checked(user_id, platform, token, options) r
$function$;
REVOKE ALL ON FUNCTION securepush.register_device(user_id text, platform text, token text, options jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.register_device(user_id text, platform text, token text,
    options jsonb) TO securepush_accounts;
