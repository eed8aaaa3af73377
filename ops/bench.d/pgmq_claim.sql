-- PGMQ's floor for a lease-and-acknowledge queue (ops/bench): claim a batch with a visibility timeout
-- (pgmq.read: FOR UPDATE SKIP LOCKED, one statement and commit), then acknowledge it by moving the
-- messages to the archive table (pgmq.archive, a second commit), as SecurePush's dispatcher claims a
-- batch and moves finished deliveries to delivery_log. :batch is set with pgbench -D batch=N; the ids
-- come back as an array literal because pgbench substitutes variables as plain text.
SELECT 'ARRAY[' || coalesce(string_agg(msg_id::text, ','), '') || ']::bigint[]' AS ids FROM pgmq.read('bench', 30, :batch) \gset
SELECT count(*) FROM pgmq.archive('bench', :ids);
