-- Each dispatcher's circuit breakers that are not closed, written by its heartbeat and shown by
-- /status and `securepush status`: a JSON array of {"platform", "host", "state", "open_until"}
-- ("host" is null for a whole platform; "state" is "open" or "half_open"; "open_until" is an
-- ISO 8601 time, null when half-open). Empty when every breaker is closed or the process stopped.
ALTER TABLE securepush.dispatchers
    ADD COLUMN circuits jsonb NOT NULL DEFAULT '[]'::jsonb
        CONSTRAINT dispatchers_circuits_is_array CHECK (jsonb_typeof(circuits) = 'array');
