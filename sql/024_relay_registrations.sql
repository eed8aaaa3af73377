-- Registrations handed to a push relay (issue 33, the self-hosted side; docs/relay.md). When the dispatchers
-- push some platforms through a vendor's relay (SECUREPUSH_PROVIDERS=relay), the relay must know which
-- tokens belong to this installation before it accepts a push to them. Registering a device must never
-- fail because the relay is down, so a registration only queues the change here, in the registering
-- transaction; the dispatchers' relay sync hands the queue to the relay in order, and a push the relay
-- refuses while its token's change still waits here is retried, not taken for a dead token.
--
-- Which platforms are relayed is the dispatchers' configuration: they record it at start-up
-- (securepush.set_relay_platforms, which also queues every active device of a newly relayed platform).
-- With no platform relayed (the default), the trigger queues nothing.

CREATE TABLE securepush.relay_outbox (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    platform  text NOT NULL,
    token     text NOT NULL,
    action    text NOT NULL CHECK (action IN ('bind', 'release')),
    queued_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX relay_outbox_token ON securepush.relay_outbox (token);

CREATE FUNCTION securepush.relay_platforms() RETURNS text[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, securepush
AS $$
    SELECT coalesce((SELECT string_to_array(nullif(s.value, ''), ',') FROM securepush.settings s WHERE s.key = 'relay_platforms'), '{}')
$$;

-- Queues the relay changes of a device row: a bind for an active device's token, a release for a token
-- an active device gave up (token changed, deactivated, deleted).
CREATE FUNCTION securepush.queue_relay_changes() RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, securepush
SET jit = off
AS $$
DECLARE
    relayed text[] := securepush.relay_platforms();
BEGIN
    IF cardinality(relayed) = 0 THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.active AND OLD.platform = ANY (relayed)
       AND (TG_OP = 'DELETE' OR NOT NEW.active OR NEW.token IS DISTINCT FROM OLD.token) THEN
        INSERT INTO securepush.relay_outbox (platform, token, action) VALUES (OLD.platform, OLD.token, 'release');
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.active AND NEW.platform = ANY (relayed)
       AND (TG_OP = 'INSERT' OR NOT OLD.active OR NEW.token IS DISTINCT FROM OLD.token) THEN
        INSERT INTO securepush.relay_outbox (platform, token, action) VALUES (NEW.platform, NEW.token, 'bind');
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER devices_relay_changes AFTER INSERT OR DELETE OR UPDATE OF token, active ON securepush.devices
FOR EACH ROW EXECUTE FUNCTION securepush.queue_relay_changes();

-- Records which platforms are relayed; a platform newly relayed has every active device queued for a bind.
-- Returns how many were queued.
CREATE FUNCTION securepush.set_relay_platforms(p_platforms text[]) RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, securepush
SET jit = off
AS $$
DECLARE
    previous text[];
    queued integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('securepush.relay_platforms', 0));
    previous := securepush.relay_platforms();
    INSERT INTO securepush.settings (key, value) VALUES ('relay_platforms', array_to_string(p_platforms, ','))
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now();
    INSERT INTO securepush.relay_outbox (platform, token, action)
    SELECT d.platform, d.token, 'bind' FROM securepush.devices d
    WHERE d.active AND d.platform = ANY (p_platforms) AND NOT d.platform = ANY (previous)
    ORDER BY d.created_at;
    GET DIAGNOSTICS queued = ROW_COUNT;
    RETURN queued;
END
$$;

-- Whether a change of `p_token` still waits to be handed to the relay.
CREATE FUNCTION securepush.relay_change_pending(p_platform text, p_token text) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, securepush
AS $$
    SELECT EXISTS (SELECT 1 FROM securepush.relay_outbox o WHERE o.token = p_token AND o.platform = p_platform)
$$;

REVOKE EXECUTE ON FUNCTION securepush.relay_platforms(), securepush.queue_relay_changes(), securepush.set_relay_platforms(text[]),
    securepush.relay_change_pending(text, text) FROM PUBLIC;
