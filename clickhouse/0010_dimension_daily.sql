-- Breakdowns of a whole workspace without filters (GET /analytics/breakdown with no
-- dimension filter, campaignId, linkId or includeBots: the report a dashboard opens
-- on) read this rollup instead of every click of click_facts: per workspace, per
-- dimension of click_facts, per value and UTC day, the non-bot clicks and a visitor
-- sketch. A 30-day breakdown reads about 30 rows per value instead of every click.
--
-- What is in it, and why no more: an insert into events pays for each row this view
-- writes (sorting, serialising the sketches, a part per insert and its merges), which
-- measured twice the cost of building the rows. One row per workspace, dimension,
-- value and day is ~0.6 rows per click in 100k-click inserts of the analytics bench's
-- data (link, rule and destination are most of them) and cost ~4-6 us of CPU per click
-- on a busy machine; per campaign as well, and bots as well, cost 3-4 times as many
-- rows (measured 14-20 us). So breakdowns of one campaign, with filters or with bots
-- read click_facts, where a campaign's clicks are one key range (README "Analytics":
-- cost and speed).
--
-- Values: the stored value of the click ('' none; rule '' is the default row), for the
-- 17 dimensions that are columns of click_facts (country, region, city, device, os,
-- browser, referrer, the five utm fields, source, link, campaign, rule, destination).
-- The tag breakdown reads the rows of dimension 'link' (a link's clicks under each of
-- its tags), so tags stay the link's tags as they are now.
--
-- Unique visitors: uniqCombined64(12) states of the 64-bit visitor hash, the sketch the
-- overview rollups keep (README "Unique clicks"): exact up to 128 visitors per row,
-- ~1.5 % RMS beyond; states of days and of hours read from click_facts merge into one
-- sketch per value.
--
-- Time: per UTC day. A range in another zone has partial UTC days at its ends; the API
-- reads their hours from click_facts (at most a day's worth of clicks).
--
-- Key: a query reads one workspace and dimension; then values, each a run of days. The
-- page's uniques are read for its values alone (a few runs, small granules of states),
-- the clicks of every value from the clicks column. Partitioned by month, parts older
-- than 10 minutes merged, as 0005.
--
-- Filled from click_facts by a view on it (a view on a view's target: an insert into
-- events goes through click_facts_mv, then this one).
-- Dedup: its own deduplication window, as the other rollups.
--
-- Existing clicks are copied one dimension at a time, each only while the table holds
-- no row of that dimension, before the view exists. Clicks inserted between the copy
-- and the view's creation are not in it: run migrations before ingesters resume, as
-- services/ingester does.

CREATE TABLE IF NOT EXISTS dimension_daily
(
    workspace_id   LowCardinality(String),
    dimension      LowCardinality(String),
    value          String,
    day            Date,
    clicks         SimpleAggregateFunction(sum, UInt64),
    visitors       AggregateFunction(uniqCombined64(12), UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (workspace_id, dimension, value, day)
SETTINGS non_replicated_deduplication_window = 1000, min_age_to_force_merge_seconds = 600,
    index_granularity = 256, min_compress_block_size = 4096, max_compress_block_size = 65536;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_country'
SELECT workspace_id, 'country', toDate(ts) AS day, toString(country) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'country') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_region'
SELECT workspace_id, 'region', toDate(ts) AS day, toString(region) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'region') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_city'
SELECT workspace_id, 'city', toDate(ts) AS day, toString(city) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'city') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_device'
SELECT workspace_id, 'device', toDate(ts) AS day, toString(device) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'device') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_os'
SELECT workspace_id, 'os', toDate(ts) AS day, toString(os) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'os') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_browser'
SELECT workspace_id, 'browser', toDate(ts) AS day, toString(browser) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'browser') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_referrer'
SELECT workspace_id, 'referrer', toDate(ts) AS day, toString(referrer) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'referrer') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_utm_source'
SELECT workspace_id, 'utm_source', toDate(ts) AS day, toString(utm_source) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'utm_source') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_utm_medium'
SELECT workspace_id, 'utm_medium', toDate(ts) AS day, toString(utm_medium) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'utm_medium') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_utm_campaign'
SELECT workspace_id, 'utm_campaign', toDate(ts) AS day, toString(utm_campaign) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'utm_campaign') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_utm_term'
SELECT workspace_id, 'utm_term', toDate(ts) AS day, toString(utm_term) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'utm_term') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_utm_content'
SELECT workspace_id, 'utm_content', toDate(ts) AS day, toString(utm_content) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'utm_content') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_source'
SELECT workspace_id, 'source', toDate(ts) AS day, toString(source) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'source') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_link'
SELECT workspace_id, 'link', toDate(ts) AS day, toString(link_id) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'link') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_campaign'
SELECT workspace_id, 'campaign', toDate(ts) AS day, toString(campaign_id) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'campaign') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_rule'
SELECT workspace_id, 'rule', toDate(ts) AS day, toString(rule_id) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'rule') = 0
GROUP BY workspace_id, day, value;

INSERT INTO dimension_daily (workspace_id, dimension, day, value, clicks, visitors) SETTINGS insert_deduplication_token = '0010_dimension_daily_destination'
SELECT workspace_id, 'destination', toDate(ts) AS day, toString(destination) AS value, count(), uniqCombined64State(12)(visitor)
FROM click_facts WHERE NOT bot AND (SELECT count() FROM dimension_daily WHERE dimension = 'destination') = 0
GROUP BY workspace_id, day, value;

-- (0015 replaces this SELECT with one writing the same rows at less cost.)
-- One GROUP BY over a row per click and dimension (a view reads only the first SELECT
-- of a UNION, so the dimensions are an ARRAY JOIN, not a union).
CREATE MATERIALIZED VIEW IF NOT EXISTS dimension_daily_mv TO dimension_daily AS
SELECT workspace_id, pair.1 AS dimension, toDate(ts) AS day, pair.2 AS value, count() AS clicks, uniqCombined64State(12)(visitor) AS visitors
FROM click_facts
ARRAY JOIN [
        ('country', toString(country)),
        ('region', toString(region)),
        ('city', toString(city)),
        ('device', toString(device)),
        ('os', toString(os)),
        ('browser', toString(browser)),
        ('referrer', toString(referrer)),
        ('utm_source', toString(utm_source)),
        ('utm_medium', toString(utm_medium)),
        ('utm_campaign', toString(utm_campaign)),
        ('utm_term', toString(utm_term)),
        ('utm_content', toString(utm_content)),
        ('source', toString(source)),
        ('link', toString(link_id)),
        ('campaign', toString(campaign_id)),
        ('rule', toString(rule_id)),
        ('destination', toString(destination))
    ] AS pair
WHERE NOT bot
GROUP BY workspace_id, dimension, day, value;
