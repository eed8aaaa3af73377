-- securepush.set_category_muted: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.set_category_muted(user_id text, category text, muted boolean)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
#variable_conflict use_variable
DECLARE
    cancelled integer := 0;
    cap integer := coalesce((SELECT value::integer FROM securepush.settings WHERE key = 'max_muted_categories'), 100);
BEGIN
    IF category IS NULL OR category !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' THEN
        RAISE EXCEPTION 'a category is 1 to 64 letters, digits, . _ - (starting with a letter or digit)'
            USING ERRCODE = '22023';
    END IF;
    IF NOT muted THEN
        DELETE FROM securepush.category_mutes m WHERE m.user_id = user_id AND m.category = category;
        RETURN 0;
    END IF;
    -- One change at a time per user, so concurrent mutes cannot pass the cap together.
    PERFORM securepush.lock_slot('category_mutes', user_id);
    IF NOT securepush.category_muted(user_id, category)
       AND (SELECT count(*) FROM securepush.category_mutes m WHERE m.user_id = user_id) >= cap THEN
        RAISE EXCEPTION 'a user mutes at most % categories: unmute one first', cap USING ERRCODE = '22023';
    END IF;
    INSERT INTO securepush.category_mutes (user_id, category) VALUES (user_id, category) ON CONFLICT DO NOTHING;
    WITH gone AS (
        DELETE FROM securepush.deliveries dl
        USING securepush.notifications n
        WHERE n.user_id = user_id AND n.category = category AND dl.notification_id = n.id
          AND dl.kind = 'notify' AND dl.state IN ('scheduled', 'pending')
        RETURNING dl.id, dl.notification_id, dl.device_id, dl.platform, dl.attempts, dl.created_at
    ),
    logged AS (
        INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, last_error,
            created_at, kind)
        SELECT g.id, g.notification_id, g.device_id, g.platform, 'cancelled', g.attempts, 'category muted',
            g.created_at, 'notify'
        FROM gone g
        RETURNING 1
    )
    SELECT count(*) INTO cancelled FROM logged;
    RETURN cancelled;
END
$function$;
REVOKE ALL ON FUNCTION securepush.set_category_muted(user_id text, category text, muted boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION securepush.set_category_muted(user_id text, category text,
    muted boolean) TO securepush_accounts;
