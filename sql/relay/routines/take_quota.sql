-- securepush_relay.take_quota: routine file (docs/sql.md).
--
-- Counts `p_pushes` against the installation's quotas for this minute and day: returns 0 when they fit
-- (and counts them), else the seconds until they would (nothing counted).
CREATE OR REPLACE FUNCTION securepush_relay.take_quota(p_installation uuid, p_pushes integer)
 RETURNS double precision
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'securepush_relay'
AS $function$
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
    INSERT INTO securepush_relay.usage AS u (installation_id, minute, pushes) VALUES (p_installation, this_minute,
        p_pushes)
    ON CONFLICT (installation_id, minute) DO UPDATE SET pushes = u.pushes + excluded.pushes;
    RETURN 0;
END
$function$;
REVOKE ALL ON FUNCTION securepush_relay.take_quota(p_installation uuid, p_pushes integer) FROM PUBLIC;
