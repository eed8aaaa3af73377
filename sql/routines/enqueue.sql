-- securepush.enqueue: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.enqueue(user_id text, payload jsonb, ttl interval DEFAULT NULL::interval,
    idempotency_key text DEFAULT NULL::text, priority integer DEFAULT 0,
    deliver_at timestamp with time zone DEFAULT NULL::timestamp with time zone, urgency text DEFAULT 'active'::text,
    collapse_key text DEFAULT NULL::text, category text DEFAULT NULL::text, preview jsonb DEFAULT NULL::jsonb)
 RETURNS uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
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
    IF urgency IS NULL OR urgency NOT IN ('passive', 'active', 'time_sensitive', 'critical') THEN
        RAISE EXCEPTION 'securepush.enqueue: urgency must be passive, active, time_sensitive or critical'
            USING ERRCODE = '22023';
    END IF;
    IF preview IS NOT NULL AND (jsonb_typeof(preview) <> 'object' OR octet_length(preview::text) > 1024) THEN
        RAISE EXCEPTION 'securepush.enqueue: preview must be a JSON object of at most 1024 bytes'
            USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.notifications AS n
        (user_id, payload, priority, idempotency_key, expires_at, deliver_at, urgency, collapse_key, category, preview)
    VALUES (user_id, payload, priority, idempotency_key,
            coalesce(deliver_at, now()) + coalesce(ttl, securepush.default_ttl()), deliver_at, urgency, collapse_key,
                category,
            preview)
    ON CONFLICT ON CONSTRAINT notifications_idempotency_unique DO NOTHING
    RETURNING n.id INTO new_id;
    IF new_id IS NULL THEN
        SELECT n.id INTO new_id FROM securepush.notifications n
        WHERE n.user_id = enqueue.user_id AND n.idempotency_key = enqueue.idempotency_key
          AND (n.producer = session_user OR securepush.all_producers_visible());
        IF new_id IS NULL THEN
            -- Keys are per user, across producers: another producer's notification has it, and its id is not
            -- this producer's to know.
            RAISE EXCEPTION 'securepush.enqueue: this idempotency key is in use for this user by another producer'
                USING ERRCODE = '23505';
        END IF;
    END IF;
    RETURN new_id;
END
$function$;
REVOKE ALL ON FUNCTION securepush.enqueue(user_id text, payload jsonb, ttl interval, idempotency_key text,
    priority integer, deliver_at timestamp with time zone, urgency text, collapse_key text, category text,
    preview jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.enqueue(user_id text, payload jsonb, ttl interval, idempotency_key text,
    priority integer, deliver_at timestamp with time zone, urgency text, collapse_key text, category text,
    preview jsonb) TO securepush_producer;
