-- securepush.collapse_digest: routine file (docs/sql.md).
--
-- The opaque per-user digest of a collapse key that travels as apns-collapse-id, FCM collapse_key and
-- the Web Push Topic: 32 hex digits of HMAC-SHA-256 under this database's salt, so a platform can neither
-- read the key nor match one user's key with another's.
-- pgcrypto's hmac is found through the search path the migration ran with (pgcrypto lands in the migrating
-- role's schema or in public), not the producer's.
CREATE OR REPLACE FUNCTION securepush.collapse_digest(p_user text, p_key text)
 RETURNS text
 LANGUAGE sql STABLE SET search_path TO 'pg_catalog', 'securepush', 'pg_temp' SET enable_seqscan TO 'on' SET jit TO 'off'
AS $function$
    SELECT left(encode(hmac(convert_to(p_user || chr(31) || p_key, 'UTF8'), s.salt, 'sha256'), 'hex'), 32)
    FROM securepush.collapse_salt s
$function$;
REVOKE ALL ON FUNCTION securepush.collapse_digest(p_user text, p_key text) FROM PUBLIC;
