-- The KV revision (JetStream sequence) at which each snapshot entry, a link's or a
-- domain's marker, was last stored in the snapshot bucket, as its publisher saw it
-- acknowledged (services/api/snapshot/outbox-publisher.ts). A publisher's put expects
-- it as the key's last sequence, so a put that reaches NATS late (its publisher timed
-- out and rolled back, and another instance published a newer entry since) is refused
-- instead of replacing the newer entry for good (the bucket keeps one message per key).
--
-- Written in the transaction that holds the key's outbox row, with the row's delete.
-- It may be behind the bucket (a put acknowledged after its transaction gave up, a
-- recreated bucket, a purged key): the put is then refused once and made again
-- expecting the sequence JetStream reports. No row: the key has no message (0).
CREATE TABLE IF NOT EXISTS snapshot_kv_sequences (
  id   text PRIMARY KEY,
  seq  bigint NOT NULL
);
