-- Conversions, one row each, from POST /conversions/s2s and the conversion pixel.
-- Ordered by workspace and link before time, like events. Money is Decimal so
-- sums are exact.
CREATE TABLE IF NOT EXISTS conversions
(
    workspace_id   String,
    link_id        String,
    ts             DateTime64(3, 'UTC'),
    conversion_id  String,
    click_id       String,
    campaign_id    String,
    event          LowCardinality(String),
    value          Decimal(18, 4),
    currency       LowCardinality(String),
    -- '' when none was given; a repeated order id counts once (pixel repeats are
    -- folded at query time, s2s repeats are refused by the API).
    order_id       String,
    attributed     Bool,
    source         LowCardinality(String),
    ingested_at    DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (workspace_id, link_id, ts, conversion_id)
SETTINGS non_replicated_deduplication_window = 1000;
