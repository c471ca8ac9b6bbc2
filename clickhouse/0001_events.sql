-- Raw clicks and impressions, one row per event, as redirectors emitted them.
-- Ordered by workspace and link before time: every report filters by workspace
-- and most by link, so those come first in the primary key.
-- Exactly-once: ingesters skip click ids already stored when a message is
-- redelivered, retried inserts carry a dedup token, and ReplacingMergeTree on
-- a key ending in click_id folds any duplicate that still slipped through.
CREATE TABLE IF NOT EXISTS events
(
    workspace_id   String,
    link_id        String,
    ts             DateTime64(3, 'UTC'),
    click_id       String,
    kind           Enum8('click' = 1, 'impression' = 2),
    campaign_id    String,
    visitor_id     String,
    country        LowCardinality(String),
    device_class   LowCardinality(String),
    os             LowCardinality(String),
    browser        LowCardinality(String),
    referrer_host  String,
    utm_source     String,
    utm_medium     String,
    utm_campaign   String,
    utm_term       String,
    utm_content    String,
    source         LowCardinality(String),
    rule_id        String,
    destination    String,
    bot            Bool,
    ingested_at    DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (workspace_id, link_id, ts, click_id)
SETTINGS non_replicated_deduplication_window = 1000;
