-- Rollups for the analytics overview of a workspace or campaign (GET /analytics
-- without linkId). link_hourly holds about one row per click at busy-workspace
-- density and exact visitor sets, so a 30-day overview over 10M clicks merged
-- ~10M rows and ~2M-visitor sets per statement. These hold clicks only (the
-- overview never counts impressions), and link_id only where top links need it.
--
-- Time: each overview range is a run of UTC hours (local days in the caller's
-- zone). Whole UTC days inside it are read from coarse rows (period 'day' of
-- workspace_clicks, 'month' of link_clicks), the edge hours from fine ones
-- ('hour', 'day'), so any zone stays exact to the hour while a 30-day range reads
-- about 30 rows per dimension, not 720. Both periods live in one table, written
-- by one view: each insert into events then writes one part per table, which is
-- most of what a view costs an insert on the embedded engine.
--
-- Unique visitors: uniqCombined64(12) states. Exact visitor sets cannot be merged
-- over millions of visitors within the overview's 50 ms budget; this sketch keeps
-- the exact set of 64-bit visitor hashes up to 128 distinct visitors (so a count up
-- to 128 is exact) and becomes a 4096-register HyperLogLog beyond, measured within
-- ~1.5 % RMS (worst seen ~4 %) from 200 to 2M visitors. One HLL merge costs ~15-35
-- us here, which is why precision 12 and why whole days come from daily states.
-- Precision 14 halves the error but costs 2-4x per merge.
-- Per-link counts (link counters, GET /analytics/{linkId}) stay exact in link_hourly.
--
-- Filters: a query must read only its own rows, never merge one state per campaign
-- or per source. So every click is written to workspace_clicks under scope
-- 'workspace' (campaign_id '', all campaigns together) and under scope 'campaign'
-- (its own campaign_id), and to both tables under source '' (all sources together;
-- clicks always have a source) and under its own source ('link', 'qr').
--
-- Dedup: like link_hourly, every target has its own deduplication window, so an
-- insert into events that is retried with the same token (and dropped there) is
-- dropped here as well instead of being counted twice.
--
-- Existing events are copied into each table before its view exists, and only
-- while the table is still empty, so re-running this file does not count them twice
-- (the copy carries a fixed deduplication token for two instances migrating at the
-- same moment). Events inserted between a table's copy and its view's creation are
-- not in it: run migrations before ingesters resume, as services/ingester does.

CREATE TABLE IF NOT EXISTS workspace_clicks
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
-- Not partitioned: these tables are small, and every part is one more to open per
-- query (about 1 ms each on the embedded engine), so all parts stay candidates for
-- the same merges instead of waiting per month.
-- Time last: the rows a query wants (its scope, campaign, source, bots or not,
-- period) are one run per time range, with no other rows' states in between.
ORDER BY (workspace_id, scope, campaign_id, source, bot, period, start)
-- Small granules: a state is read whole (~3 KB beyond 128 visitors), so a default
-- granule of 8192 rows would deserialize thousands of other rows' states to reach
-- a few (measured: 40 ms instead of 9 ms for a 30-day total).
SETTINGS non_replicated_deduplication_window = 1000, index_granularity = 256;

-- Each click is aggregated once per campaign, hour and source; only those few
-- rows are fanned out to scopes, sources and periods (fanning out clicks first
-- cost three times as much per insert).
INSERT INTO workspace_clicks SETTINGS insert_deduplication_token = '0004_workspace_clicks'
SELECT workspace_id, scope, scoped_campaign AS campaign_id, scoped_source AS source, bot, period,
    if(period = 'hour', hour, toStartOfDay(hour)) AS start,
    sum(n) AS clicks, uniqCombined64MergeState(12)(v) AS visitors, sumMap(c) AS countries, sumMap(d) AS devices
FROM (
    SELECT workspace_id, campaign_id, toStartOfHour(ts) AS hour, bot, source, count() AS n, uniqCombined64State(12)(visitor_id) AS v,
        sumMap([country], [toUInt64(1)]) AS c, sumMap([device_class], [toUInt64(1)]) AS d
    FROM events
    WHERE kind = 'click' AND (SELECT count() FROM workspace_clicks) = 0
    GROUP BY workspace_id, campaign_id, hour, bot, source
)
ARRAY JOIN ['workspace', 'campaign'] AS scope, ['', campaign_id] AS scoped_campaign
ARRAY JOIN ['', source] AS scoped_source
ARRAY JOIN ['hour', 'day'] AS period
GROUP BY workspace_id, scope, scoped_campaign, scoped_source, bot, period, start;

CREATE MATERIALIZED VIEW IF NOT EXISTS workspace_clicks_mv TO workspace_clicks AS
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

-- Top links: one row per link and UTC month holding its clicks per day (period
-- 'month': a 30-day range reads ~2 rows per link, not 30), and one per link and
-- UTC day holding its clicks per hour (period 'day', for the edges of a range).
CREATE TABLE IF NOT EXISTS link_clicks
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
-- campaign_id before link_id: a link that moves keeps its old clicks in the old campaign.
ORDER BY (workspace_id, source, bot, period, start, campaign_id, link_id)
SETTINGS non_replicated_deduplication_window = 1000;

INSERT INTO link_clicks SETTINGS insert_deduplication_token = '0004_link_clicks'
SELECT workspace_id, scoped_source AS source, bot, period,
    if(period = 'day', toStartOfDay(hour), toDateTime(toStartOfMonth(hour), 'UTC')) AS start, campaign_id, link_id,
    sumMap([if(period = 'day', hour, toStartOfDay(hour))], [n]) AS clicks
FROM (
    SELECT workspace_id, campaign_id, link_id, toStartOfHour(ts) AS hour, bot, source, count() AS n
    FROM events
    WHERE kind = 'click' AND (SELECT count() FROM link_clicks) = 0
    GROUP BY workspace_id, campaign_id, link_id, hour, bot, source
)
ARRAY JOIN ['', source] AS scoped_source
ARRAY JOIN ['day', 'month'] AS period
GROUP BY workspace_id, scoped_source, bot, period, start, campaign_id, link_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS link_clicks_mv TO link_clicks AS
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
