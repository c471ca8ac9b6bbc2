-- The click log (GET /analytics/clicks): every click again, ordered by time within
-- its workspace. events is ordered by workspace and link before time (what every
-- other report wants), so its newest clicks were found by reading and sorting all of
-- a workspace's events: 1-3.6 s for the first page at 10M clicks. Here the newest
-- rows of a workspace are the last of its key range, read backwards in order, and a
-- from/to range is a key range too.
--
-- A ReplacingMergeTree on the same click id as events: a click stored twice (which
-- events folds the same way) folds here, and the query folds what is not merged yet.
-- Only what the log shows and filters by is kept (no visitor, destination, kind).
--
-- Existing clicks are copied before the view exists, and only while the table is
-- still empty. A copy made twice (two instances migrating at the same moment) stores
-- each click twice, which folds like any duplicate. Clicks inserted between the copy
-- and the view's creation are not in it: run migrations before ingesters resume, as
-- services/ingester does.

CREATE TABLE IF NOT EXISTS click_log
(
    workspace_id   String,
    ts             DateTime64(3, 'UTC'),
    click_id       String,
    link_id        String,
    campaign_id    String,
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
    bot            Bool
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (workspace_id, ts, click_id)
SETTINGS non_replicated_deduplication_window = 1000;

INSERT INTO click_log SETTINGS insert_deduplication_token = '0006_click_log'
SELECT workspace_id, ts, click_id, link_id, campaign_id, country, device_class, os, browser, referrer_host,
    utm_source, utm_medium, utm_campaign, utm_term, utm_content, source, rule_id, bot
FROM events
WHERE kind = 'click' AND (SELECT count() FROM click_log) = 0;

CREATE MATERIALIZED VIEW IF NOT EXISTS click_log_mv TO click_log AS
SELECT workspace_id, ts, click_id, link_id, campaign_id, country, device_class, os, browser, referrer_host,
    utm_source, utm_medium, utm_campaign, utm_term, utm_content, source, rule_id, bot
FROM events
WHERE kind = 'click';
