-- SecurePush core schema: devices, notifications, the delivery queue and its history.
-- Producers use only `securepush.notifications` (INSERT) and `securepush.enqueue(...)`.

CREATE SCHEMA IF NOT EXISTS securepush;

-- Deployment settings written by `securepush migrate` / `securepush serve` from configuration.
CREATE TABLE securepush.settings (
    key        text PRIMARY KEY,
    value      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO securepush.settings (key, value) VALUES ('default_ttl', '7 days');

-- The TTL applied when a producer gives none.
CREATE FUNCTION securepush.default_ttl() RETURNS interval
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce((SELECT value::interval FROM securepush.settings WHERE key = 'default_ttl'), interval '7 days')
$$;

-- A device of one of the app's users, reachable through one push platform.
CREATE TABLE securepush.devices (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      text NOT NULL CONSTRAINT devices_user_id_valid CHECK (length(user_id) BETWEEN 1 AND 256),
    platform     text NOT NULL CONSTRAINT devices_platform_valid
                     CHECK (platform IN ('apns', 'fcm', 'wns', 'webpush', 'simulated')),
    token        text NOT NULL CONSTRAINT devices_token_valid CHECK (length(token) BETWEEN 1 AND 4096),
    options      jsonb NOT NULL DEFAULT '{}'::jsonb CONSTRAINT devices_options_object CHECK (jsonb_typeof(options) = 'object'),
    secret_hash  bytea,
    active       boolean NOT NULL DEFAULT true,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz,
    deactivated_reason text,
    CONSTRAINT devices_platform_token_unique UNIQUE (platform, token)
);

CREATE INDEX devices_active_user_idx ON securepush.devices (user_id) WHERE active;

-- A notification: the payload stays here; pushes carry only `id`.
CREATE TABLE securepush.notifications (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id         text NOT NULL CONSTRAINT notifications_user_id_valid CHECK (length(user_id) BETWEEN 1 AND 256),
    payload         jsonb CONSTRAINT notifications_payload_max_64kib CHECK (octet_length(payload::text) <= 65536),
    priority        smallint NOT NULL DEFAULT 0 CONSTRAINT notifications_priority_valid CHECK (priority BETWEEN -100 AND 100),
    idempotency_key text CONSTRAINT notifications_idempotency_key_valid CHECK (length(idempotency_key) BETWEEN 1 AND 256),
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL DEFAULT now() + securepush.default_ttl(),
    read_at         timestamptz,
    read_by_device  uuid,
    purged_at       timestamptz,
    CONSTRAINT notifications_payload_present CHECK (payload IS NOT NULL OR purged_at IS NOT NULL),
    CONSTRAINT notifications_idempotency_unique UNIQUE (user_id, idempotency_key)
);

CREATE INDEX notifications_user_created_idx ON securepush.notifications (user_id, created_at DESC, id DESC);
CREATE INDEX notifications_expires_idx ON securepush.notifications (expires_at) WHERE purged_at IS NULL;

-- The hot queue: one row per (notification, device) still to be pushed. Narrow on purpose;
-- finished rows move to `delivery_log`.
CREATE TABLE securepush.deliveries (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    notification_id  uuid NOT NULL REFERENCES securepush.notifications (id) ON DELETE CASCADE,
    device_id        uuid NOT NULL REFERENCES securepush.devices (id) ON DELETE CASCADE,
    platform         text NOT NULL,
    state            text NOT NULL DEFAULT 'pending' CONSTRAINT deliveries_state_valid CHECK (state IN ('pending', 'claimed')),
    priority         smallint NOT NULL DEFAULT 0,
    run_at           timestamptz NOT NULL DEFAULT now(),
    attempts         integer NOT NULL DEFAULT 0,
    expires_at       timestamptz NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    lease_token      uuid,
    lease_expires_at timestamptz,
    claimed_by       uuid,
    last_error       text
);

-- Matches the claim's WHERE and ORDER BY.
CREATE INDEX deliveries_claim_idx ON securepush.deliveries (priority DESC, run_at, id) WHERE state = 'pending';
CREATE INDEX deliveries_lease_idx ON securepush.deliveries (lease_expires_at) WHERE state = 'claimed';
CREATE INDEX deliveries_device_idx ON securepush.deliveries (device_id);
CREATE INDEX deliveries_notification_idx ON securepush.deliveries (notification_id);

-- What became of each delivery. Pruned after the retention period.
CREATE TABLE securepush.delivery_log (
    id                  uuid PRIMARY KEY,
    notification_id     uuid NOT NULL,
    device_id           uuid NOT NULL,
    platform            text NOT NULL,
    outcome             text NOT NULL CONSTRAINT delivery_log_outcome_valid
                            CHECK (outcome IN ('sent', 'failed', 'token_invalid', 'cancelled', 'expired')),
    attempts            integer NOT NULL,
    provider_message_id text,
    last_error          text,
    created_at          timestamptz NOT NULL,
    finished_at         timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX delivery_log_finished_idx ON securepush.delivery_log (finished_at);
CREATE INDEX delivery_log_notification_idx ON securepush.delivery_log (notification_id);

-- One row per dispatcher process: the fleet's heartbeat.
CREATE TABLE securepush.dispatchers (
    id           uuid PRIMARY KEY,
    host         text NOT NULL,
    pid          integer NOT NULL,
    role         text NOT NULL,
    version      text NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    stopped_at   timestamptz,
    sent         bigint NOT NULL DEFAULT 0,
    failed       bigint NOT NULL DEFAULT 0
);

-- Fan-out, set-based and once per statement: one delivery per active device of each
-- recipient, and at most one NOTIFY per statement (never per row).
CREATE FUNCTION securepush.fan_out() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO securepush.deliveries (notification_id, device_id, platform, priority, expires_at)
    SELECT n.id, d.id, d.platform, n.priority, n.expires_at
    FROM new_notifications n
    JOIN securepush.devices d ON d.user_id = n.user_id AND d.active
    WHERE n.expires_at > now() AND n.payload IS NOT NULL;
    IF FOUND THEN
        PERFORM pg_notify('securepush_deliveries', '');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER notifications_fan_out
AFTER INSERT ON securepush.notifications
REFERENCING NEW TABLE AS new_notifications
FOR EACH STATEMENT EXECUTE FUNCTION securepush.fan_out();

-- The producers' function: enqueue with an optional TTL, idempotency key and priority.
-- The same (user_id, idempotency_key) returns the existing notification and sends nothing twice.
CREATE FUNCTION securepush.enqueue(
    user_id text,
    payload jsonb,
    ttl interval DEFAULT NULL,
    idempotency_key text DEFAULT NULL,
    priority integer DEFAULT 0
) RETURNS uuid
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    new_id uuid;
BEGIN
    IF user_id IS NULL OR payload IS NULL THEN
        RAISE EXCEPTION 'securepush.enqueue: user_id and payload are required' USING ERRCODE = '22004';
    END IF;
    IF ttl IS NOT NULL AND ttl <= interval '0' THEN
        RAISE EXCEPTION 'securepush.enqueue: ttl must be positive' USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.notifications AS n (user_id, payload, priority, idempotency_key, expires_at)
    VALUES (user_id, payload, priority, idempotency_key, now() + coalesce(ttl, securepush.default_ttl()))
    ON CONFLICT ON CONSTRAINT notifications_idempotency_unique DO NOTHING
    RETURNING n.id INTO new_id;
    IF new_id IS NULL THEN
        SELECT n.id INTO new_id FROM securepush.notifications n
        WHERE n.user_id = enqueue.user_id AND n.idempotency_key = enqueue.idempotency_key;
    END IF;
    RETURN new_id;
END
$$;
