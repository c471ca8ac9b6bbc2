-- The snapshot publishers take the oldest queued rows (ORDER BY queued_at LIMIT n FOR
-- UPDATE SKIP LOCKED). Without an index in that order each take read and sorted the
-- whole table, whose deleted rows pile up between autovacuum's visits at the rate links
-- change (services/api/snapshot/outbox-publisher.ts). With it a take walks the index
-- from the oldest entry, and entries of deleted rows are marked dead as it meets them.
CREATE INDEX IF NOT EXISTS snapshot_outbox_queued ON snapshot_outbox (queued_at);
