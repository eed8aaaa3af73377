-- The fetch lifecycle: when a platform accepted each push and when each device first fetched each
-- notification. The hourly fetch statistics operators watch (`securepush.fetch_stats`) and the
-- per-device status view for producers (`securepush.notification_status`) read them; both are created in
-- 006, which adds the delivery kind they filter on.

-- When the push service accepted a `sent` delivery: the moment the dispatcher got the answer, which
-- precedes `finished_at` (the write of its whole claimed batch) by up to the batch's duration. NULL for
-- other outcomes, and for rows written before this migration (readers fall back to `finished_at`).
ALTER TABLE securepush.delivery_log ADD COLUMN accepted_at timestamptz;

-- The first fetch of a notification's payload by each device. The read API writes it in the same
-- statement that marks the notification read; it goes with its notification (pruning). `device_id` is a
-- plain reference, as in `delivery_log` (devices are deactivated, never deleted).
CREATE TABLE securepush.fetches (
    notification_id uuid NOT NULL REFERENCES securepush.notifications (id) ON DELETE CASCADE,
    device_id       uuid NOT NULL,
    fetched_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (notification_id, device_id)
);
