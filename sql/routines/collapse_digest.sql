-- securepush.collapse_digest: routine file (docs/sql.md).
--
-- The opaque per-user digest of a collapse key that travels as apns-collapse-id, FCM collapse_key and
-- the Web Push Topic: 32 hex digits of HMAC-SHA-256 under this database's salt, so a platform can neither
-- read the key nor match one user's key with another's.
-- It runs inside the fan-out as the schema owner, so every call is schema-qualified (pgcrypto lives in
-- securepush since migration 031; nothing on its fixed path grants CREATE to anyone but the owner, which
-- `migrate` checks), and no function a producer plants can stand in for one of these. Strict (048): a
-- notification without a key has no digest, and its callers pass its key as it is without a call.
CREATE OR REPLACE FUNCTION securepush.collapse_digest(p_user text, p_key text)
 RETURNS text
 LANGUAGE sql
 STABLE
 STRICT
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
 SET enable_seqscan TO 'on'
 SET jit TO 'off'
AS $function$
    SELECT pg_catalog.left(
               pg_catalog.encode(
                   securepush.hmac(
                       pg_catalog.convert_to(p_user OPERATOR(pg_catalog.||) pg_catalog.chr(31)
                           OPERATOR(pg_catalog.||) p_key, 'UTF8'),
                       s.salt, 'sha256'),
                   'hex'),
               32)
    FROM securepush.collapse_salt s
$function$;
REVOKE ALL ON FUNCTION securepush.collapse_digest(p_user text, p_key text) FROM PUBLIC;
