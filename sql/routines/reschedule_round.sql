-- securepush.reschedule_round: routine file (docs/sql.md).
--
-- One bounded round of re-timing after quiet-hours changes: takes at most `p_users` requests, oldest first,
-- skipping those another session holds (a row lock on securepush.reschedules, which no producer may take),
-- and walks at most `p_notifications` notifications in all, each request an equal share. A request whose
-- walk is not finished keeps where it stopped and goes behind the others. Returns the deliveries moved, and
-- whether another round may find work now (a walk not finished, or as many requests taken as allowed).
CREATE OR REPLACE FUNCTION securepush.reschedule_round(p_users integer, p_notifications integer, OUT moved integer,
    OUT more boolean)
 RETURNS record
 LANGUAGE plpgsql
 SET jit TO 'off'
AS $function$
DECLARE
    taken securepush.reschedules[];
    pending securepush.reschedules;
    share integer;
    step record;
BEGIN
    moved := 0;
    more := false;
    SELECT array_agg(t.request ORDER BY (t.request).requested_at) INTO taken
    FROM (SELECT r AS request
        FROM securepush.reschedules r ORDER BY r.requested_at LIMIT p_users FOR UPDATE SKIP LOCKED) t;
    IF taken IS NULL THEN
        RETURN;
    END IF;
    share := greatest(1, p_notifications / cardinality(taken));
    more := cardinality(taken) >= p_users;
    FOREACH pending IN ARRAY taken LOOP
        step := securepush.reschedule_user(pending.user_id, pending.before_created_at, pending.before_id, share);
        moved := moved + step.moved;
        IF step.stopped_created IS NULL THEN
            DELETE FROM securepush.reschedules r WHERE r.user_id = pending.user_id;
        ELSE
            UPDATE securepush.reschedules r
            SET before_created_at = step.stopped_created, before_id = step.stopped_id, requested_at = now()
            WHERE r.user_id = pending.user_id;
            more := true;
        END IF;
    END LOOP;
END
$function$;
REVOKE ALL ON FUNCTION securepush.reschedule_round(p_users integer, p_notifications integer, OUT moved integer,
    OUT more boolean) FROM PUBLIC;
