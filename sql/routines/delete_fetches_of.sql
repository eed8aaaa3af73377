-- securepush.delete_fetches_of: routine file (docs/sql.md), with its trigger.
--
-- A deleted notification takes its fetches rows with it (what the foreign key's ON DELETE CASCADE did until
-- 045; the key also checked every fetch written, a query on the notification per row).
-- Nothing writes a fetch for a deleted notification: both reads (device_fetch_requests, fetch_for_device)
-- write a fetches row only for the notifications their statement marked, so a delete of one either waits for
-- that read's transaction (the mark's row lock), and this trigger then sees its fetches row, or came first, and
-- the read marks nothing.
CREATE OR REPLACE FUNCTION securepush.delete_fetches_of()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET jit TO 'off'
 SET search_path TO 'pg_catalog', 'securepush', 'pg_temp'
AS $function$
BEGIN
    DELETE FROM securepush.fetches f WHERE f.notification_id = ANY(ARRAY(SELECT o.id FROM old_rows o));
    RETURN NULL;
END
$function$;
REVOKE ALL ON FUNCTION securepush.delete_fetches_of() FROM PUBLIC;
CREATE OR REPLACE TRIGGER notifications_delete_fetches AFTER DELETE ON securepush.notifications
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION securepush.delete_fetches_of();
