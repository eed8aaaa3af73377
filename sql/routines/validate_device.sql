-- securepush.validate_device: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.validate_device(platform text, token text, options jsonb)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
    IF platform = 'wns' AND jsonb_typeof(options) = 'object' AND options ? 'app' THEN
        IF jsonb_typeof(options -> 'app') <> 'string'
            OR (options ->> 'app') !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,255}$' THEN
            RAISE EXCEPTION 'app must be an app name from SECUREPUSH_WNS_APPS (letters, digits, . _ -)'
                USING ERRCODE = '22023';
        END IF;
        options := options - 'app';
    END IF;
    PERFORM securepush.validate_device_options(platform, token, options);
END
$function$;
REVOKE ALL ON FUNCTION securepush.validate_device(platform text, token text, options jsonb) FROM PUBLIC;
