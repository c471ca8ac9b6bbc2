-- The values of link-valued dimensions (tags: kept on links in Postgres, a click counts
-- under its link's tags as they are now), copied into ClickHouse by the API so that a
-- query joins them here instead of receiving them: a workspace's map of 8k tagged links
-- sent as query parameters cost ~60-90 ms of engine CPU and ~20 ms in the API per
-- statement that used it (parsing and escaping ~200 KB of literals), every time.
--
-- A snapshot per workspace, dimension and fingerprint (a digest of the values of every
-- link that has any, computed in Postgres per request): a row per such link, and one
-- with link_id '' that marks the snapshot as written (a workspace without any tag has
-- only that one). Readers take the snapshot of the fingerprint Postgres gives now, so
-- a retagged link counts under its new tags at once. A snapshot is written when a
-- request finds none of its fingerprint written within a day (the same snapshot
-- written twice holds each link twice; readers take one row per link), and rows go
-- after 7 days (TTL): a current snapshot is rewritten daily, long before it expires.
CREATE TABLE IF NOT EXISTS link_values
(
    workspace_id   LowCardinality(String),
    dimension      LowCardinality(String),
    fingerprint    String,
    link_id        String,
    link_values    Array(String),
    written_at     DateTime('UTC') DEFAULT now()
)
ENGINE = MergeTree
ORDER BY (workspace_id, dimension, fingerprint, link_id)
TTL written_at + INTERVAL 7 DAY
SETTINGS non_replicated_deduplication_window = 1000, index_granularity = 1024;
