-- securepush.work_left: routine file (docs/sql.md).
--
-- What is left to push: deliveries (pending, scheduled, claimed or retrying), notifications awaiting their
-- fan-out and the items of leases (since 046 a claim's items live in its securepush.claims row until their
-- outcomes are written; a lease whose dispatcher lost its connection is rescued at its end). Zero when
-- everything accepted has its outcome. The chaos and failover rows, ops/bench and the tests wait on it (since
-- 051: three spellings before, mended separately when leases came).
CREATE OR REPLACE FUNCTION securepush.work_left()
 RETURNS bigint
 LANGUAGE sql
 STABLE
AS $function$
    SELECT (SELECT count(*) FROM securepush.deliveries) + (SELECT count(*) FROM securepush.fan_out_queue)
           + (SELECT count(*) FROM securepush.claims)
$function$;
REVOKE ALL ON FUNCTION securepush.work_left() FROM PUBLIC;
