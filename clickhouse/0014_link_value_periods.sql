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
-- Periods: whole UTC days before the current one (from dimension_daily), and the
-- current day's finished hours (from click_facts); the current hour is always read
-- live. Each fill is a batch (an id the API draws) with, per period, a row per value
-- and one `total` row holding every click the batch read for it. The API reads a
-- period from a batch whose total equals the period's clicks now (dimension_daily's
-- rows of one dimension sum to the day's clicks; click_facts counts an hour's), so a
-- click arriving late for a past period makes that period's batch stale and it is
-- filled again: clicks only ever add, so an equal total means the same clicks. Two API
-- instances filling the same period write two batches; readers take one per period.
--
-- Rows older than a day are not read (the API fills again), and go after 7 days.
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
