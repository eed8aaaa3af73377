-- securepush.validate_device_options: routine file (docs/sql.md).
CREATE OR REPLACE FUNCTION securepush.validate_device_options(platform text, token text, options jsonb)
 RETURNS void
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    allowed text[];
    unknown text;
    option_value text;
BEGIN
    IF platform IS NULL OR platform NOT IN ('apns', 'fcm', 'wns', 'webpush', 'unifiedpush', 'simulated') THEN
        RAISE EXCEPTION 'platform must be one of apns, fcm, wns, webpush, unifiedpush, simulated'
            USING ERRCODE = '22023';
    END IF;
    IF token IS NULL OR length(token) NOT BETWEEN 1 AND 4096 THEN
        RAISE EXCEPTION 'token must be 1 to 4096 characters' USING ERRCODE = '22023';
    END IF;
    IF options IS NULL OR jsonb_typeof(options) <> 'object' THEN
        RAISE EXCEPTION 'platform options must be a JSON object' USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_each(options) e WHERE jsonb_typeof(e.value) <> 'string'
        OR length(e.value #>> '{}') > 512) THEN
        RAISE EXCEPTION 'platform options must be strings of at most 512 characters' USING ERRCODE = '22023';
    END IF;

    allowed := CASE platform
        WHEN 'apns' THEN ARRAY['environment', 'push_style', 'topic']
        WHEN 'fcm' THEN ARRAY['project']
        WHEN 'wns' THEN ARRAY[]::text[]
        WHEN 'webpush' THEN ARRAY['p256dh', 'auth', 'urgency']
        WHEN 'unifiedpush' THEN ARRAY['p256dh', 'auth', 'urgency']
        ELSE ARRAY['push_style', 'topic']
    END;
    SELECT string_agg(k, ', ' ORDER BY k) INTO unknown FROM jsonb_object_keys(options) k WHERE k <> ALL (allowed);
    IF unknown IS NOT NULL THEN
        RAISE EXCEPTION 'unknown option(s) for platform %: % (allowed: %)', platform, unknown,
            coalesce(nullif(array_to_string(allowed, ', '), ''), 'none')
            USING ERRCODE = '22023';
    END IF;

    option_value := options ->> 'environment';
    IF option_value IS NOT NULL AND option_value NOT IN ('production', 'sandbox') THEN
        RAISE EXCEPTION 'environment must be production or sandbox' USING ERRCODE = '22023';
    END IF;
    option_value := options ->> 'push_style';
    IF option_value IS NOT NULL AND option_value NOT IN ('silent', 'alert') THEN
        RAISE EXCEPTION 'push_style must be silent or alert' USING ERRCODE = '22023';
    END IF;
    option_value := options ->> 'topic';
    IF option_value IS NOT NULL AND option_value !~ '^[A-Za-z0-9][A-Za-z0-9.-]{0,254}$' THEN
        RAISE EXCEPTION 'topic must be a bundle id such as com.example.app' USING ERRCODE = '22023';
    END IF;

    CASE platform
    WHEN 'apns' THEN
        IF token !~ '^[0-9A-Fa-f]+$' OR length(token) NOT BETWEEN 32 AND 400 OR length(token) % 2 <> 0 THEN
            RAISE EXCEPTION 'an APNs device token is an even number of hexadecimal digits' USING ERRCODE = '22023';
        END IF;
    WHEN 'fcm' THEN
        IF token !~ '^[A-Za-z0-9_:.-]+$' OR length(token) < 20 THEN
            RAISE EXCEPTION 'an FCM registration token has 20 or more characters of A-Z a-z 0-9 _ : . -'
                USING ERRCODE = '22023';
        END IF;
    WHEN 'wns' THEN
        IF token !~ '^https://[A-Za-z0-9.-]+(:[0-9]+)?/' THEN
            RAISE EXCEPTION 'a WNS channel URI must be an https URL' USING ERRCODE = '22023';
        END IF;
    WHEN 'webpush', 'unifiedpush' THEN
        -- A UnifiedPush distributor's endpoint is a Web Push endpoint (RFC 8030), with the same subscription keys.
        IF token !~ '^https://[A-Za-z0-9.-]+(:[0-9]+)?/' THEN
            RAISE EXCEPTION 'a Web Push endpoint must be an https URL' USING ERRCODE = '22023';
        END IF;
        IF coalesce(options ->> 'p256dh', '') !~ '^[A-Za-z0-9_-]{86,88}={0,2}$' THEN
            RAISE EXCEPTION 'a Web Push subscription needs its p256dh key (base64url, 65 bytes)'
                USING ERRCODE = '22023';
        END IF;
        IF coalesce(options ->> 'auth', '') !~ '^[A-Za-z0-9_-]{22}={0,2}$' THEN
            RAISE EXCEPTION 'a Web Push subscription needs its auth secret (base64url, 16 bytes)'
                USING ERRCODE = '22023';
        END IF;
        option_value := options ->> 'urgency';
        IF option_value IS NOT NULL AND option_value NOT IN ('very-low', 'low', 'normal', 'high') THEN
            RAISE EXCEPTION 'urgency must be very-low, low, normal or high' USING ERRCODE = '22023';
        END IF;
    ELSE
        NULL;
    END CASE;
END
$function$;
REVOKE ALL ON FUNCTION securepush.validate_device_options(platform text, token text, options jsonb) FROM PUBLIC;
