-- The clicks that converted, with every dimension, so that conversions are counted by
-- their click's dimensions (breakdowns, dimension filters) without a request joining
-- them to click_facts. That join read the click hash of every click of the 30-day
-- attribution window before the range (~10M clicks at the bench's scale: ~230 ms of
-- engine CPU per request) to find the ~0.1 % that converted; here they are a few
-- thousand rows of their own.
--
-- A row per converted click: the click_facts row of the click (its columns), for a
-- click of an attributed conversion. A click converted twice, or found by both views,
-- may be stored twice (a few rows in thousands): readers take one row per click (ANY
-- join, or `click IN`).
--
-- Filled by two views, because either may be stored first:
--   * converted_clicks_by_conversion_mv, on an insert into conversions: the clicks of
--     the inserted conversions found in click_facts by their key (workspace, campaign,
--     link, time: the time is in the click id), the conversion's campaign being its
--     link's. A click made before its link moved to another campaign is not found this
--     way: its conversion counts in totals but under no dimension value (README
--     "Analytics");
--   * converted_clicks_by_click_mv, on an insert into click_facts (via click_facts_mv):
--     the inserted clicks that attributed conversions already stored name (a conversion
--     ingested before its click: backlogs drain independently), found among the recent
--     conversions of the inserted clicks' links.
-- In a view, the table it watches stands for the inserted rows wherever the query names
-- it, so each lookup reads only the other table. Each view looks only after its own
-- table's rows are stored, so of a click and its conversion inserted at the same moment
-- at least one finds the other (at worst both do: one row per click is read).
--
-- Dedup: its own deduplication window, as the rollups.
--
-- Existing conversions' clicks are copied while the table is still empty, before the
-- views exist. Clicks or conversions inserted between the copy and a view's creation
-- are not in it: run migrations before ingesters resume, as services/ingester does.

-- click_facts' columns (and, by the same statement, its projection, dropped: nothing
-- here reads by time alone).
CREATE TABLE IF NOT EXISTS converted_clicks AS click_facts
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (workspace_id, ts, click)
SETTINGS non_replicated_deduplication_window = 1000, min_age_to_force_merge_seconds = 600;

ALTER TABLE converted_clicks DROP PROJECTION IF EXISTS by_time;

INSERT INTO converted_clicks SETTINGS insert_deduplication_token = '0011_converted_clicks'
SELECT * FROM click_facts
WHERE click IN (SELECT cityHash64(click_id) FROM conversions WHERE attributed) AND (SELECT count() FROM converted_clicks) = 0
ORDER BY workspace_id, ts, click;

-- The view watches conversions, so they are its FROM; the columns are the click's, each
-- named. A click id (shared/click-id.ts) carries its click's time: `ck_` and 47 bytes in
-- base64url, byte 0 the version (1), bytes 1-6 the epoch ms, big-endian. So a
-- conversion's click is a point of click_facts' key (workspace, campaign, link, second):
-- a granule per part, whatever the link's traffic. A click id in another form (ids
-- written by hand, tests) is searched among its link's clicks of the attribution window.
CREATE MATERIALIZED VIEW IF NOT EXISTS converted_clicks_by_conversion_mv TO converted_clicks AS
SELECT k.workspace_id AS workspace_id, k.campaign_id AS campaign_id, k.link_id AS link_id, k.ts AS ts, k.bot AS bot, k.visitor AS visitor, k.click AS click, k.source AS source, k.country AS country, k.region AS region, k.city AS city, k.device AS device, k.os AS os, k.browser AS browser, k.referrer AS referrer, k.utm_source AS utm_source, k.utm_medium AS utm_medium, k.utm_campaign AS utm_campaign, k.utm_term AS utm_term, k.utm_content AS utm_content, k.rule_id AS rule_id, k.destination AS destination
FROM conversions AS c
INNER JOIN (
    SELECT * FROM click_facts
    PREWHERE click IN (SELECT cityHash64(click_id) FROM conversions WHERE attributed)
    WHERE (workspace_id, campaign_id, link_id, ts) IN (
            SELECT workspace_id, campaign_id, link_id, toDateTime(intDiv(reinterpretAsUInt64(reverse(substring(bytes, 2, 6))), 1000), 'UTC')
            FROM (SELECT *, tryBase64URLDecode(substring(click_id, 4)) AS bytes FROM conversions WHERE attributed)
            WHERE length(bytes) = 47 AND startsWith(click_id, 'ck_') AND substring(bytes, 1, 1) = char(1))
        OR ((workspace_id, campaign_id, link_id) IN (
                SELECT workspace_id, campaign_id, link_id
                FROM (SELECT *, tryBase64URLDecode(substring(click_id, 4)) AS bytes FROM conversions WHERE attributed)
                WHERE NOT (length(bytes) = 47 AND startsWith(click_id, 'ck_') AND substring(bytes, 1, 1) = char(1)))
            -- The attribution window (30 days) and clock skew (a minute) around the inserted conversions.
            AND ts >= (SELECT min(ts) FROM conversions) - INTERVAL 30 DAY - INTERVAL 1 MINUTE
            AND ts <= (SELECT max(ts) FROM conversions) + INTERVAL 1 MINUTE)
) AS k ON k.click = cityHash64(c.click_id) AND k.workspace_id = c.workspace_id
WHERE c.attributed;

CREATE MATERIALIZED VIEW IF NOT EXISTS converted_clicks_by_click_mv TO converted_clicks AS
SELECT * FROM click_facts
WHERE click IN (
    SELECT cityHash64(click_id) FROM conversions
    WHERE (workspace_id, link_id) IN (SELECT workspace_id, link_id FROM click_facts)
      AND ts >= (SELECT min(ts) FROM click_facts) - INTERVAL 1 MINUTE
      AND attributed
);
