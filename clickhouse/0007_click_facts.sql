-- Every click again, narrow, for the reports whose filters combine freely
-- (GET /analytics/breakdown, any analytics endpoint given a dimension filter,
-- realtime, experiments). Rollups keyed by a few dimensions cannot answer
-- "?country=DE,AT&os=ios&utm_source=newsletter by browser": a rollup per
-- combination of 17 dimensions holds about one row per click. So these reports
-- read clicks, and this table makes a click as cheap to read as it can be:
--
--   * every dimension LowCardinality (a dictionary per part; filters and GROUP BY
--     work on small integer keys, not strings), the workspace too: every query tests
--     it per row, and as a String that one column was 60 % of the bytes a 30-day
--     breakdown read (measured at 10M clicks: 145 MB and 300 ms of engine CPU against
--     55 MB and 200 ms);
--   * visitor and click ids as their 64-bit cityHash64: uniques sketch a UInt64,
--     and a conversion finds its click by an 8-byte key instead of a 60-character id;
--   * clicks only (no impressions), time to the second;
--   * ordered by workspace, campaign and link before time: a campaign's or a link's
--     clicks are one key range, and a workspace's reports read only its own range;
--   * a projection by time within the workspace (by_time) with the few columns
--     GET /analytics/realtime reads: the last hour is then a key range of ~1/720 of
--     a month instead of every row of it (measured at 10M clicks: 24k rows and
--     ~10 ms of engine CPU, against 6.6M rows and ~120 ms; a minmax index on ts
--     skipped almost nothing, since a granule of a sorted link spans hours).
--     ClickHouse picks it by itself for queries that need only its columns; a
--     realtime request filtered by another dimension reads the table.
--
-- Dedup: like the rollups, its own deduplication window, so an insert into events
-- that is retried with the same token (and dropped there) is dropped here as well.
--
-- Existing clicks are copied before the view exists, and only while the table is
-- still empty (a fixed deduplication token, for two instances migrating at the same
-- moment). Clicks inserted between the copy and the view's creation are not in it:
-- run migrations before ingesters resume, as services/ingester does.

CREATE TABLE IF NOT EXISTS click_facts
(
    workspace_id   LowCardinality(String),
    campaign_id    LowCardinality(String),
    link_id        String,
    ts             DateTime('UTC'),
    bot            Bool,
    visitor        UInt64,
    click          UInt64,
    source         LowCardinality(String),
    country        LowCardinality(String),
    device         LowCardinality(String),
    os             LowCardinality(String),
    browser        LowCardinality(String),
    referrer       LowCardinality(String),
    utm_source     LowCardinality(String),
    utm_medium     LowCardinality(String),
    utm_campaign   LowCardinality(String),
    utm_term       LowCardinality(String),
    utm_content    LowCardinality(String),
    rule_id        LowCardinality(String),
    destination    LowCardinality(String),
    PROJECTION by_time (SELECT workspace_id, ts, bot, visitor, campaign_id, link_id, country ORDER BY workspace_id, ts)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (workspace_id, campaign_id, link_id, ts)
SETTINGS non_replicated_deduplication_window = 1000;

INSERT INTO click_facts SETTINGS insert_deduplication_token = '0007_click_facts'
SELECT workspace_id, campaign_id, link_id, ts, bot, cityHash64(visitor_id), cityHash64(click_id), source, country, device_class,
    os, browser, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, rule_id, destination
FROM events
WHERE kind = 'click' AND (SELECT count() FROM click_facts) = 0
ORDER BY workspace_id, campaign_id, link_id, ts;

CREATE MATERIALIZED VIEW IF NOT EXISTS click_facts_mv TO click_facts AS
SELECT workspace_id, campaign_id, link_id, ts, bot, cityHash64(visitor_id) AS visitor, cityHash64(click_id) AS click, source, country,
    device_class AS device, os, browser, referrer_host AS referrer, utm_source, utm_medium, utm_campaign, utm_term, utm_content, rule_id, destination
FROM events
WHERE kind = 'click';
