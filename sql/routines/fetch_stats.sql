-- securepush.fetch_stats: routine file (docs/sql.md).
--
-- Per platform, pushes accepted in the last `window_` and how many of them were fetched by the device
-- they went to, with the push-to-fetch latency's median and 99th percentile (seconds; NULL when none was
-- fetched; a fetch before the push was accepted counts as 0). Reads the window through
-- `delivery_log_finished_idx` (accepted_at <= finished_at) and each fetch through the primary key of `fetches` (005).
-- Only pushes that announce a notification count, never clears (which are not fetched).
CREATE OR REPLACE FUNCTION securepush.fetch_stats(window_ interval DEFAULT '01:00:00'::interval)
 RETURNS TABLE(platform text, accepted bigint, fetched bigint, fetch_ratio double precision,
    push_to_fetch_p50_seconds double precision, push_to_fetch_p99_seconds double precision)
 LANGUAGE sql
 STABLE
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
    WITH pushed AS (
        SELECT l.platform,
               f.fetched_at IS NOT NULL AS was_fetched,
               greatest(0, extract(epoch FROM f.fetched_at - coalesce(l.accepted_at, l.finished_at)))::float8 AS latency
        FROM securepush.delivery_log l
        LEFT JOIN securepush.fetches f ON f.notification_id = l.notification_id AND f.device_id = l.device_id
        WHERE l.outcome = 'sent' AND l.kind = 'notify'
          AND l.finished_at > now() - window_
          AND coalesce(l.accepted_at, l.finished_at) > now() - window_
    )
    SELECT platform,
           count(*),
           count(*) FILTER (WHERE was_fetched),
           (count(*) FILTER (WHERE was_fetched))::float8 / count(*),
           percentile_cont(0.5) WITHIN GROUP (ORDER BY latency) FILTER (WHERE was_fetched),
           percentile_cont(0.99) WITHIN GROUP (ORDER BY latency) FILTER (WHERE was_fetched)
    FROM pushed
    GROUP BY platform
    ORDER BY platform
$function$;
REVOKE ALL ON FUNCTION securepush.fetch_stats(window_ interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.fetch_stats(window_ interval) TO securepush_producer;
