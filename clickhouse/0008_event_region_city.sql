-- Region (first-level subdivision) and city of each click by geo-IP, beside its
-- country (shared/schemas/click-event.ts declares them). Clicks stored before
-- read '' (unknown), as any click whose address has no place.
ALTER TABLE events
    ADD COLUMN IF NOT EXISTS region LowCardinality(String) DEFAULT '' AFTER country,
    ADD COLUMN IF NOT EXISTS city   LowCardinality(String) DEFAULT '' AFTER region;
