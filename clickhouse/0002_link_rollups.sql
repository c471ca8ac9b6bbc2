-- Per link, per hour, per dimension: the rollup that link counters and the
-- analytics overview read instead of raw events. Unique visitors are kept as
-- exact, mergeable states so any range of hours merges to exact uniques.
CREATE TABLE IF NOT EXISTS link_hourly
(
    workspace_id   String,
    link_id        String,
    hour           DateTime('UTC'),
    campaign_id    String,
    kind           Enum8('click' = 1, 'impression' = 2),
    bot            Bool,
    source         LowCardinality(String),
    country        LowCardinality(String),
    device_class   LowCardinality(String),
    events         SimpleAggregateFunction(sum, UInt64),
    visitors       AggregateFunction(uniqExact, String),
    last_ts        SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
-- campaign_id is part of the key: a link that moves keeps its old clicks in the old campaign.
ORDER BY (workspace_id, link_id, hour, campaign_id, kind, bot, source, country, device_class)
-- Its own dedup window: without it a retried (deduplicated) insert into events
-- would still be pushed through the view and counted twice here.
SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS link_hourly_mv TO link_hourly AS
SELECT
    workspace_id,
    link_id,
    toStartOfHour(ts) AS hour,
    campaign_id,
    kind,
    bot,
    source,
    country,
    device_class,
    count() AS events,
    uniqExactState(visitor_id) AS visitors,
    max(ts) AS last_ts
FROM events
GROUP BY workspace_id, link_id, hour, campaign_id, kind, bot, source, country, device_class;
