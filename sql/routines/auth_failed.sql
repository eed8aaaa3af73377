-- securepush.auth_failed: routine file (docs/sql.md).
--
-- Records one failure for each key; returns the longest block now in force (seconds, 0 when none).
-- Failures older than `window_` start the count again.
CREATE OR REPLACE FUNCTION securepush.auth_failed(keys text[], free integer, base interval, max_block interval,
    window_ interval)
 RETURNS double precision
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    longest double precision := 0;
    row_ record;
BEGIN
    FOR row_ IN
        INSERT INTO securepush.auth_failures AS f (key, failures)
        SELECT k, 1 FROM unnest(keys) k
        ON CONFLICT (key) DO UPDATE
            SET failures = CASE WHEN f.last_at < now() - window_ THEN 1 ELSE f.failures + 1 END,
                first_at = CASE WHEN f.last_at < now() - window_ THEN now() ELSE f.first_at END,
                last_at = now()
        RETURNING f.key, f.failures
    LOOP
        IF row_.failures > free THEN
            UPDATE securepush.auth_failures
            SET blocked_until = now() + least(max_block, base * power(2, least(row_.failures - free - 1, 30)))
            WHERE key = row_.key;
            longest := greatest(longest, extract(epoch FROM least(max_block, base * power(2,
                least(row_.failures - free - 1, 30)))));
        END IF;
    END LOOP;
    RETURN longest;
END
$function$;
REVOKE ALL ON FUNCTION securepush.auth_failed(keys text[], free integer, base interval, max_block interval,
    window_ interval) FROM PUBLIC;
