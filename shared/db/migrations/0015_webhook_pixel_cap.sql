-- conversion.created keeps the reports' cap on pixel conversions (a pixel is a public URL:
-- anyone holding a click id can fire it with any order id): of one click's pixel
-- conversions, each the first of its order, the first MAX_PIXEL_CONVERSIONS_PER_CLICK (10)
-- claimed are announced and the rest are not. Reports keep the 10 earliest by time;
-- claims come in arrival order, the same order but for a backlog delivered late.
--
-- `announced` is false on a claim past its click's cap, so a redelivered conversion is
-- judged as it was the first time. Claims made before this migration count as announced
-- and toward no click's cap.
ALTER TABLE webhook_conversion_claims ADD COLUMN announced boolean NOT NULL DEFAULT true;

-- Pixel conversions claimed per click. Its row lock orders concurrent claimers of one
-- click (any number of senders): each counts on from what the previous one committed.
CREATE TABLE webhook_pixel_clicks (
  workspace_id  text NOT NULL,
  click_id      text NOT NULL,
  claimed       integer NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, click_id)
);
