-- securepush.fan_out_rows: routine file (docs/sql.md).
--
-- The notifications p_ids, each found by its primary key: fan_out_batch reads its batch through this, so that
-- its plans do not depend on statistics (044: under its generic plans, a plan made while the table looked empty
-- found the batch by scanning every unexpired notification through notifications_expires_idx, a claim's cost
-- growing with the table). The fence (OFFSET 0) keeps the callers' conditions out of the lookup. SQL and free of
-- SET clauses, so that the planner inlines it into its callers.
CREATE OR REPLACE FUNCTION securepush.fan_out_rows(p_ids uuid[])
 RETURNS SETOF securepush.notifications
 LANGUAGE sql
 STABLE
AS $function$
    SELECT n.*
    FROM pg_catalog.unnest(p_ids) AS t(id)
    CROSS JOIN LATERAL (SELECT x.* FROM securepush.notifications x WHERE x.id = t.id OFFSET 0) n
$function$;
REVOKE ALL ON FUNCTION securepush.fan_out_rows(p_ids uuid[]) FROM PUBLIC;
