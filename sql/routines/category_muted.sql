-- securepush.category_muted: routine file (docs/sql.md).
--
-- Whether p_user muted p_category (securepush.category_mutes). Its own function since 050: securepush.pushable
-- calls it only for a notification with a category, and without the subquery pushable is inlined into its
-- callers (PostgreSQL 15 inlines no SQL function whose body has a subquery, and plans a function it does not
-- inline again at every statement that calls it).
CREATE OR REPLACE FUNCTION securepush.category_muted(p_user text, p_category text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
    SELECT EXISTS (SELECT 1 FROM securepush.category_mutes m WHERE m.user_id = p_user AND m.category = p_category)
$function$;
REVOKE ALL ON FUNCTION securepush.category_muted(p_user text, p_category text) FROM PUBLIC;
