-- The LISTEN connection's state in each dispatcher's heartbeat, for /status: whether it is connected and
-- when it last heard from the database (a notification or a liveness probe).
ALTER TABLE securepush.dispatchers ADD COLUMN listener_connected boolean;
ALTER TABLE securepush.dispatchers ADD COLUMN listener_heard_at timestamptz;
