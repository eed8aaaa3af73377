-- securepush.quiet_release: routine file (docs/sql.md).
--
-- The first instant at or after p_at whose wall clock in p_zone is outside [p_starts, p_ends).
-- The window ends when the wall clock first reads p_ends or later: on a day whose DST gap swallows p_ends
-- (02:30 on a spring-forward night) that is the transition itself; on a fall-back night that repeats
-- p_ends, its first occurrence.
CREATE OR REPLACE FUNCTION securepush.quiet_release(p_zone text, p_starts time without time zone,
    p_ends time without time zone, p_at timestamp with time zone)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    wall timestamp := p_at AT TIME ZONE p_zone;
    clock time := wall::time;
    end_wall timestamp;
    before_offset interval;
    after_offset interval;
    low timestamptz;
    high timestamptz;
    middle timestamptz;
BEGIN
    IF p_starts = p_ends THEN
        RETURN p_at;
    ELSIF p_starts < p_ends THEN
        IF clock < p_starts OR clock >= p_ends THEN
            RETURN p_at;
        END IF;
        end_wall := wall::date + p_ends;
    ELSE
        IF clock < p_starts AND clock >= p_ends THEN
            RETURN p_at;
        END IF;
        end_wall := CASE WHEN clock >= p_starts THEN wall::date + 1 ELSE wall::date END + p_ends;
    END IF;
    -- The two readings of end_wall: with the UTC offset in force a day before it and a day after it.
    before_offset := ((end_wall - interval '1 day') AT TIME ZONE 'UTC') AT TIME ZONE p_zone
        - (end_wall - interval '1 day');
    after_offset := ((end_wall + interval '1 day') AT TIME ZONE 'UTC') AT TIME ZONE p_zone
        - (end_wall + interval '1 day');
    low := (end_wall - before_offset) AT TIME ZONE 'UTC';
    high := (end_wall - after_offset) AT TIME ZONE 'UTC';
    IF (low AT TIME ZONE p_zone) = end_wall AND (high AT TIME ZONE p_zone) = end_wall THEN
        RETURN greatest(least(low, high), p_at);
    ELSIF (low AT TIME ZONE p_zone) = end_wall THEN
        RETURN greatest(low, p_at);
    ELSIF (high AT TIME ZONE p_zone) = end_wall THEN
        RETURN greatest(high, p_at);
    END IF;
    -- end_wall does not exist (a gap): the answer is the transition, the first instant whose wall clock
    -- is past end_wall. It lies between the two readings; bisect to the microsecond.
    low := least((end_wall - before_offset) AT TIME ZONE 'UTC', (end_wall - after_offset) AT TIME ZONE 'UTC');
    high := greatest((end_wall - before_offset) AT TIME ZONE 'UTC', (end_wall - after_offset) AT TIME ZONE 'UTC');
    WHILE high - low > interval '1 microsecond' LOOP
        middle := low + (high - low) / 2;
        IF (middle AT TIME ZONE p_zone) >= end_wall THEN
            high := middle;
        ELSE
            low := middle;
        END IF;
    END LOOP;
    -- A gap of a day or more (Samoa skipped 30 December 2011) can land the clock inside the next night's
    -- window: go on from there.
    RETURN securepush.quiet_release(p_zone, p_starts, p_ends, greatest(high, p_at));
END
$function$;
REVOKE ALL ON FUNCTION securepush.quiet_release(p_zone text, p_starts time without time zone,
    p_ends time without time zone, p_at timestamp with time zone) FROM PUBLIC;
