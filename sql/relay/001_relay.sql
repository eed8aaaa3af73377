-- The push relay's own schema (issue 33), in the relay's own database: a vendor runs the relay with the app's
-- APNs keys and FCM/WNS credentials; self-hosted SecurePush servers ("installations") push through it.
-- The relay stores no push. It keeps installations (the public half of each installation's key: a dump
-- cannot sign as anyone), which tokens each installation registered (a keyed hash, never the token),
-- usage counters for quotas, request ids seen recently (replay), and an audit of re-bound tokens.

CREATE SCHEMA IF NOT EXISTS securepush_relay;

CREATE TABLE securepush_relay.installations (
    id              uuid PRIMARY KEY,
    name            text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 100),
    -- The installation's P-256 public key (X9.63, 65 bytes); the private half was printed once.
    public_key      bytea NOT NULL CHECK (length(public_key) = 65),
    key_version     integer NOT NULL DEFAULT 1,
    disabled_at     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- Quotas; NULL: unlimited.
    pushes_per_minute integer CHECK (pushes_per_minute > 0),
    pushes_per_day    integer CHECK (pushes_per_day > 0),
    max_tokens        integer CHECK (max_tokens > 0)
);

-- Which installation registered a token: HMAC-SHA-256 of platform and token under the relay's token key
-- (SECUREPUSH_RELAY_TOKEN_KEY_FILE). A push names its token; the relay checks the binding with the digest
-- and never needs the token at rest.
CREATE TABLE securepush_relay.bindings (
    digest          bytea PRIMARY KEY CHECK (length(digest) = 32),
    installation_id uuid NOT NULL REFERENCES securepush_relay.installations (id) ON DELETE CASCADE,
    bound_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bindings_installation ON securepush_relay.bindings (installation_id);

-- Pushes accepted per installation and minute (quotas, /status, /metrics); pruned after two days.
CREATE TABLE securepush_relay.usage (
    installation_id uuid NOT NULL REFERENCES securepush_relay.installations (id) ON DELETE CASCADE,
    minute          timestamptz NOT NULL,
    pushes          bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (installation_id, minute)
);

-- Request ids (`jti`) seen while their token is valid: a captured request cannot be replayed.
CREATE TABLE securepush_relay.request_ids (
    jti             text PRIMARY KEY CHECK (length(jti) BETWEEN 16 AND 64),
    expires_at      timestamptz NOT NULL
);
CREATE INDEX request_ids_expiry ON securepush_relay.request_ids (expires_at);

CREATE TABLE securepush_relay.audit (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at              timestamptz NOT NULL DEFAULT now(),
    event           text NOT NULL CHECK (event IN ('installation_added', 'installation_disabled', 'installation_enabled',
                                                   'key_rotated', 'quota_set', 'token_rebound')),
    installation_id uuid NOT NULL,
    -- For token_rebound: the installation the token was bound to before.
    previous_installation_id uuid
);

-- Binds tokens to an installation; a token bound to another is re-bound to this one (a device moved
-- between servers) and audited. Returns how many were newly bound or re-bound, or -1 when the
-- installation's max_tokens would be exceeded (nothing is bound then).
CREATE FUNCTION securepush_relay.bind(p_installation uuid, p_digests bytea[]) RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, securepush_relay
AS $$
DECLARE
    cap integer;
    current_count bigint;
    changed integer;
BEGIN
    SELECT max_tokens INTO cap FROM securepush_relay.installations WHERE id = p_installation FOR UPDATE;
    IF cap IS NOT NULL THEN
        -- Upper bound: the installation's tokens plus every named digest bound elsewhere or not at all.
        SELECT count(*) INTO current_count FROM (
            SELECT digest FROM securepush_relay.bindings WHERE installation_id = p_installation
            UNION SELECT unnest(p_digests)
        ) t;
        IF current_count > cap THEN
            RETURN -1;
        END IF;
    END IF;
    -- No FOR UPDATE here: the upsert below changes these rows in the same statement, and a row lock taken
    -- after that (unreferenced data-modifying CTEs run last) would skip them. The statement's snapshot
    -- still reads the previous owner; the upsert's own lock serializes concurrent binds of a digest.
    WITH previous AS (
        SELECT b.digest, b.installation_id FROM securepush_relay.bindings b
        WHERE b.digest = ANY (p_digests) AND b.installation_id <> p_installation
    ),
    audited AS (
        INSERT INTO securepush_relay.audit (event, installation_id, previous_installation_id)
        SELECT 'token_rebound', p_installation, previous.installation_id FROM previous
    ),
    upserted AS (
        INSERT INTO securepush_relay.bindings AS b (digest, installation_id)
        SELECT DISTINCT d, p_installation FROM unnest(p_digests) d
        ON CONFLICT (digest) DO UPDATE SET installation_id = excluded.installation_id, bound_at = now()
        WHERE b.installation_id <> excluded.installation_id
        RETURNING 1
    )
    SELECT count(*)::integer INTO changed FROM upserted;
    RETURN changed;
END
$$;

-- Counts `p_pushes` against the installation's quotas for this minute and day: returns 0 when they fit
-- (and counts them), else the seconds until they would (nothing counted).
CREATE FUNCTION securepush_relay.take_quota(p_installation uuid, p_pushes integer) RETURNS double precision
LANGUAGE plpgsql
SET search_path = pg_catalog, securepush_relay
AS $$
DECLARE
    per_minute integer;
    per_day integer;
    this_minute timestamptz := date_trunc('minute', now());
    used_minute bigint;
    used_day bigint;
BEGIN
    SELECT pushes_per_minute, pushes_per_day INTO per_minute, per_day
    FROM securepush_relay.installations WHERE id = p_installation;
    IF per_minute IS NOT NULL OR per_day IS NOT NULL THEN
        -- One installation's requests take turns here; other installations are not held.
        PERFORM pg_advisory_xact_lock(hashtextextended('securepush_relay.quota:' || p_installation::text, 0));
        SELECT coalesce(sum(pushes) FILTER (WHERE minute = this_minute), 0), coalesce(sum(pushes), 0)
        INTO used_minute, used_day
        FROM securepush_relay.usage WHERE installation_id = p_installation AND minute > now() - interval '1 day';
        IF per_minute IS NOT NULL AND used_minute + p_pushes > per_minute THEN
            RETURN extract(epoch FROM this_minute + interval '1 minute' - now());
        END IF;
        IF per_day IS NOT NULL AND used_day + p_pushes > per_day THEN
            RETURN 3600;
        END IF;
    END IF;
    INSERT INTO securepush_relay.usage AS u (installation_id, minute, pushes) VALUES (p_installation, this_minute, p_pushes)
    ON CONFLICT (installation_id, minute) DO UPDATE SET pushes = u.pushes + excluded.pushes;
    RETURN 0;
END
$$;

-- Prunes what is no longer needed: request ids past their expiry, usage older than two days.
CREATE FUNCTION securepush_relay.prune() RETURNS integer
LANGUAGE sql
SET search_path = pg_catalog, securepush_relay
AS $$
    WITH ids AS (DELETE FROM securepush_relay.request_ids WHERE expires_at < now() RETURNING 1),
         old AS (DELETE FROM securepush_relay.usage WHERE minute < now() - interval '2 days' RETURNING 1)
    SELECT ((SELECT count(*) FROM ids) + (SELECT count(*) FROM old))::integer
$$;
