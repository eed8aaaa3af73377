-- securepush.claimed_items: routine file (docs/sql.md).
--
-- The deliveries held in leases (securepush.claims, since 046), one row each, as readers see claimed
-- delivery rows: the status view, cancel's in-flight count, /status, the support lookup and the claim's own
-- result (048) read them here. Each was claimed once (its first attempt) at its claim's time.
CREATE OR REPLACE VIEW securepush.claimed_items AS
SELECT c.token, c.worker, c.claimed_at, c.lease_expires_at, i.id, i.notification_id, i.device_id, i.platform
FROM securepush.claims c
CROSS JOIN LATERAL securepush.claim_items(c) i;
