-- The overview's rollups of 0004 (workspace_clicks, link_clicks) rebuilt as
-- overview_clicks and overview_link_clicks: the same rows from the same views, stored
-- for how the overview reads them. 0004's tables and views are dropped at the end.
--
-- Why: at 10M clicks a 30-day overview's engine CPU went mostly to parts, not rows.
-- Every unmerged part holds its own row per link and month, and its own granules of
-- ~3 KB visitor sketches around the few rows a query wants. Background merges leave
-- about 7 parts per table (measured after 11 inserts of 1M clicks and after 550 of
-- 20k alike); the overview statement then cost ~60 ms of engine CPU, ~31 ms with one
-- part per month (bench/suites/analytics.ts, README "Analytics").
--
-- Parts: partitioned by month, and parts older than 10 minutes are merged with the
-- other old parts of their month (min_age_to_force_merge_seconds), by the background
-- merges of any ClickHouse server and of the embedded engine alike. A month then reads
-- as one part plus the small parts of the last minutes. The price: while clicks
-- arrive, the current month's rows are rewritten about every 10 minutes (~5 s of CPU
-- at 10M clicks a month, under 1 % of a core). Unpartitioned, as 0004 was, that merge
-- would rewrite all history each time.
--
-- Granules: 32 rows of sketches, 1024 link rows, compressed in blocks of at most
-- 32-64 KB, so reading the few rows a query wants from a part does not decompress and
-- deserialize thousands of others (0004's defaults: 256 and 8192 rows, 1 MB blocks).
--
-- Rows, keys, sketches (uniqCombined64(12)), scopes, sources and periods are as in
-- 0004, whose comments explain them.
--
-- Existing events are copied into each table before its view exists, and only while
-- the table is still empty, so re-running this file does not count them twice (the
-- copy is ordered and carries a fixed deduplication token, so two instances migrating
-- at the same moment insert the same blocks and the second is dropped). Events inserted
-- between a table's copy and its view's creation are not in it: run migrations before
-- ingesters resume, as services/ingester does. API instances still reading 0004's
-- tables fail once this has run: deploy the API with it.

CREATE TABLE IF NOT EXISTS overview_clicks
(
    workspace_id   String,
    scope          Enum8('workspace' = 1, 'campaign' = 2),
    campaign_id    String,
    source         LowCardinality(String),
    bot            Bool,
    period         Enum8('hour' = 1, 'day' = 2),
    start          DateTime('UTC'),
    clicks         SimpleAggregateFunction(sum, UInt64),
    visitors       AggregateFunction(uniqCombined64(12), String),
    -- country code ('' = unknown) -> clicks, device class -> clicks
    countries      SimpleAggregateFunction(sumMap, Tuple(Array(String), Array(UInt64))),
    devices        SimpleAggregateFunction(sumMap, Tuple(Array(String), Array(UInt64)))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(start)
ORDER BY (workspace_id, scope, campaign_id, source, bot, period, start)
SETTINGS non_replicated_deduplication_window = 1000, min_age_to_force_merge_seconds = 600,
    index_granularity = 32, min_compress_block_size = 4096, max_compress_block_size = 32768;

INSERT INTO overview_clicks SETTINGS insert_deduplication_token = '0005_overview_clicks'
SELECT workspace_id, scope, scoped_campaign AS campaign_id, scoped_source AS source, bot, period,
    if(period = 'hour', hour, toStartOfDay(hour)) AS start,
    sum(n) AS clicks, uniqCombined64MergeState(12)(v) AS visitors, sumMap(c) AS countries, sumMap(d) AS devices
FROM (
    SELECT workspace_id, campaign_id, toStartOfHour(ts) AS hour, bot, source, count() AS n, uniqCombined64State(12)(visitor_id) AS v,
        sumMap([country], [toUInt64(1)]) AS c, sumMap([device_class], [toUInt64(1)]) AS d
    FROM events
    WHERE kind = 'click' AND (SELECT count() FROM overview_clicks) = 0
    GROUP BY workspace_id, campaign_id, hour, bot, source
)
ARRAY JOIN ['workspace', 'campaign'] AS scope, ['', campaign_id] AS scoped_campaign
ARRAY JOIN ['', source] AS scoped_source
ARRAY JOIN ['hour', 'day'] AS period
GROUP BY workspace_id, scope, scoped_campaign, scoped_source, bot, period, start
ORDER BY workspace_id, scope, scoped_campaign, scoped_source, bot, period, start;

CREATE MATERIALIZED VIEW IF NOT EXISTS overview_clicks_mv TO overview_clicks AS
SELECT workspace_id, scope, scoped_campaign AS campaign_id, scoped_source AS source, bot, period,
    if(period = 'hour', hour, toStartOfDay(hour)) AS start,
    sum(n) AS clicks, uniqCombined64MergeState(12)(v) AS visitors, sumMap(c) AS countries, sumMap(d) AS devices
FROM (
    SELECT workspace_id, campaign_id, toStartOfHour(ts) AS hour, bot, source, count() AS n, uniqCombined64State(12)(visitor_id) AS v,
        sumMap([country], [toUInt64(1)]) AS c, sumMap([device_class], [toUInt64(1)]) AS d
    FROM events
    WHERE kind = 'click'
    GROUP BY workspace_id, campaign_id, hour, bot, source
)
ARRAY JOIN ['workspace', 'campaign'] AS scope, ['', campaign_id] AS scoped_campaign
ARRAY JOIN ['', source] AS scoped_source
ARRAY JOIN ['hour', 'day'] AS period
GROUP BY workspace_id, scope, scoped_campaign, scoped_source, bot, period, start;

-- Top links: per link, one row per UTC month holding its clicks per day (period
-- 'month') and one per UTC day holding its clicks per hour (period 'day').
CREATE TABLE IF NOT EXISTS overview_link_clicks
(
    workspace_id   String,
    source         LowCardinality(String),
    bot            Bool,
    period         Enum8('day' = 1, 'month' = 2),
    start          DateTime('UTC'),
    campaign_id    String,
    link_id        String,
    -- start of each hour (period 'day') or day (period 'month') -> clicks
    clicks         SimpleAggregateFunction(sumMap, Tuple(Array(DateTime('UTC')), Array(UInt64)))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(start)
-- campaign_id before link_id: a link that moves keeps its old clicks in the old campaign.
ORDER BY (workspace_id, source, bot, period, start, campaign_id, link_id)
SETTINGS non_replicated_deduplication_window = 1000, min_age_to_force_merge_seconds = 600,
    index_granularity = 1024, min_compress_block_size = 4096, max_compress_block_size = 65536;

INSERT INTO overview_link_clicks SETTINGS insert_deduplication_token = '0005_overview_link_clicks'
SELECT workspace_id, scoped_source AS source, bot, period,
    if(period = 'day', toStartOfDay(hour), toDateTime(toStartOfMonth(hour), 'UTC')) AS start, campaign_id, link_id,
    sumMap([if(period = 'day', hour, toStartOfDay(hour))], [n]) AS clicks
FROM (
    SELECT workspace_id, campaign_id, link_id, toStartOfHour(ts) AS hour, bot, source, count() AS n
    FROM events
    WHERE kind = 'click' AND (SELECT count() FROM overview_link_clicks) = 0
    GROUP BY workspace_id, campaign_id, link_id, hour, bot, source
)
ARRAY JOIN ['', source] AS scoped_source
ARRAY JOIN ['day', 'month'] AS period
GROUP BY workspace_id, scoped_source, bot, period, start, campaign_id, link_id
ORDER BY workspace_id, scoped_source, bot, period, start, campaign_id, link_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS overview_link_clicks_mv TO overview_link_clicks AS
SELECT workspace_id, scoped_source AS source, bot, period,
    if(period = 'day', toStartOfDay(hour), toDateTime(toStartOfMonth(hour), 'UTC')) AS start, campaign_id, link_id,
    sumMap([if(period = 'day', hour, toStartOfDay(hour))], [n]) AS clicks
FROM (
    SELECT workspace_id, campaign_id, link_id, toStartOfHour(ts) AS hour, bot, source, count() AS n
    FROM events
    WHERE kind = 'click'
    GROUP BY workspace_id, campaign_id, link_id, hour, bot, source
)
ARRAY JOIN ['', source] AS scoped_source
ARRAY JOIN ['day', 'month'] AS period
GROUP BY workspace_id, scoped_source, bot, period, start, campaign_id, link_id;

-- The overview folds conversions per order when it reads them (conversion-filter.ts):
-- their few, small parts are merged the same way.
ALTER TABLE conversions MODIFY SETTING min_age_to_force_merge_seconds = 600;

-- Views first, so no insert is written to a table being dropped.
DROP VIEW IF EXISTS workspace_clicks_mv;
DROP VIEW IF EXISTS link_clicks_mv;
DROP TABLE IF EXISTS workspace_clicks;
DROP TABLE IF EXISTS link_clicks;
