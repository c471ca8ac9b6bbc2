-- Region and city (issue 15's click event fields, in events since its migration) as
-- analytics dimensions: the two columns in click_facts, and its view re-created to
-- fill them. Clicks copied into click_facts before this read '' (unknown), as they
-- do in events. The view is dropped and created in one migration, which runs before
-- ingesters resume (services/ingester), so no insert falls between the two.
ALTER TABLE click_facts
    ADD COLUMN IF NOT EXISTS region LowCardinality(String) DEFAULT '' AFTER country,
    ADD COLUMN IF NOT EXISTS city   LowCardinality(String) DEFAULT '' AFTER region;

DROP VIEW IF EXISTS click_facts_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS click_facts_mv TO click_facts AS
SELECT workspace_id, campaign_id, link_id, ts, bot, cityHash64(visitor_id) AS visitor, cityHash64(click_id) AS click, source, country,
    region, city, device_class AS device, os, browser, referrer_host AS referrer, utm_source, utm_medium, utm_campaign, utm_term,
    utm_content, rule_id, destination
FROM events
WHERE kind = 'click';
