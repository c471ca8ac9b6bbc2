-- A workspace's clicks and unique visitors per value of a link-valued dimension (tags)
-- and period, for the breakdown of a whole workspace by that dimension: a cache the API
-- fills and checks, not a view. Ingestion pays nothing for it.
--
-- Why: such a breakdown reads dimension_daily's rows of dimension 'link' (a row per
-- link and day) and merges each row's visitor sketch into its link's tags. A link's
-- day rarely sees a visitor twice, so those sketches hold nearly every click: merging
-- them costs about what scanning the clicks does (at 10M clicks, 300k rows: ~150-180
-- ms for the sketches alone, whatever the split by tag). Per tag and day the same
-- 30 days are ~750 rows, read in ~15 ms.
--
-- A value's rows are those of a snapshot of the links' values (link_values, by
-- fingerprint): a retagged link changes the fingerprint, so the next breakdown fills
-- periods for the new one and a click counts under its link's tags as they are now.
--
-- Periods: whole UTC days (from dimension_daily), and the hours of the current day (from
-- click_facts), each once it ended 10 minutes ago; the rest is read live. Each fill is
-- a batch (an id the API draws): per period a row per value and a `pending` total of
-- every click it read, then, once those are written, the totals copied as `total`,
-- which readers go by (a fill failing half-way is never read). The API reads a period
-- from a batch whose total equals the period's clicks now (dimension_daily's link rows
-- for a day, click_facts for an hour), so a click arriving late for a past period makes
-- its batch stale: the request is answered without the cache and the period filled
-- again in the background. Clicks only ever add, so an equal total means the same
-- clicks. Two API instances filling the same period write two batches, and readers
-- take one per period.
--
-- Batches over 6 days old are not read (filled again), and rows go after 7 days.
CREATE TABLE IF NOT EXISTS link_value_periods
(
    workspace_id   LowCardinality(String),
    dimension      LowCardinality(String),
    fingerprint    String,
    period         LowCardinality(String),
    start          DateTime('UTC'),
    batch          String,
    kind           LowCardinality(String),
    value          String,
    clicks         UInt64,
    visitors       AggregateFunction(uniqCombined64(12), UInt64),
    written_at     DateTime('UTC') DEFAULT now()
)
ENGINE = MergeTree
ORDER BY (workspace_id, dimension, fingerprint, start, batch, kind, value)
TTL written_at + INTERVAL 7 DAY
SETTINGS index_granularity = 1024;
