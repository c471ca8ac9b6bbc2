-- The click log's table again (0006's click_log), now with every dimension a filter can
-- name: region, city and destination as well, so the log's rows and CSV carry them and
-- a filter on them reads this table instead of events. Column types as click_log's (and
-- region and city LowCardinality, as in events): every dimension LowCardinality cost an
-- insert ~1.4 us more per click (building a dictionary of each part for destinations,
-- utm terms, ...), against ~0.3 us for these. Ordered by time within its workspace, as click_log was: the newest rows of
-- a workspace are the last of its key range, read backwards in order, and a from/to
-- range is a key range. A ReplacingMergeTree on the click id, as events and click_log
-- are: a click stored twice folds here, and the query folds what is not merged yet.
--
-- click_log is dropped at the end (its view first). Existing clicks are copied from
-- events (which has every column since 0008) before the view exists, and only while
-- the table is still empty (~9 s per million clicks on the embedded engine). A copy made
-- twice (two instances migrating at the same moment) stores each click twice, which
-- folds like any duplicate. Clicks inserted between the copy and the view's creation
-- are not in it: run migrations before ingesters resume, as services/ingester does. API
-- instances still reading click_log fail once this has run: deploy the API with it.

CREATE TABLE IF NOT EXISTS clicks_by_time
(
    workspace_id   String,
    ts             DateTime64(3, 'UTC'),
    click_id       String,
    link_id        String,
    campaign_id    String,
    country        LowCardinality(String),
    region         LowCardinality(String),
    city           LowCardinality(String),
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
    bot            Bool
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (workspace_id, ts, click_id)
SETTINGS non_replicated_deduplication_window = 1000;

INSERT INTO clicks_by_time SETTINGS insert_deduplication_token = '0012_clicks_by_time'
SELECT workspace_id, ts, click_id, link_id, campaign_id, country, region, city, device_class, os, browser, referrer_host,
    utm_source, utm_medium, utm_campaign, utm_term, utm_content, source, rule_id, destination, bot
FROM events
WHERE kind = 'click' AND (SELECT count() FROM clicks_by_time) = 0;

CREATE MATERIALIZED VIEW IF NOT EXISTS clicks_by_time_mv TO clicks_by_time AS
SELECT workspace_id, ts, click_id, link_id, campaign_id, country, region, city, device_class, os, browser, referrer_host,
    utm_source, utm_medium, utm_campaign, utm_term, utm_content, source, rule_id, destination, bot
FROM events
WHERE kind = 'click';

-- Views first, so no insert is written to a table being dropped.
DROP VIEW IF EXISTS click_log_mv;
DROP TABLE IF EXISTS click_log;
