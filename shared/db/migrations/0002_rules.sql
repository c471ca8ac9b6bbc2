-- Routing rules. link_id NULL: a campaign-wide rule, evaluated for every link of
-- the campaign. Invariant kept by the API: a link rule's campaign_id is its
-- link's campaign (moving a link moves its rules), so every rule that shares a
-- link's visitor bucket lives in that link's campaign.
CREATE TABLE rules (
  id                      text PRIMARY KEY,
  workspace_id            text NOT NULL REFERENCES workspaces (id),
  campaign_id             text NOT NULL REFERENCES campaigns (id),
  link_id                 text REFERENCES links (id),
  name                    text NOT NULL DEFAULT '',
  type                    text NOT NULL,
  -- Validated and normalised by the API (uppercase countries, defaulted operator).
  conditions              jsonb NOT NULL,
  destination_url         text NOT NULL,
  priority                integer NOT NULL DEFAULT 50 CHECK (priority BETWEEN 1 AND 100),
  enabled                 boolean NOT NULL DEFAULT true,
  deep_link_enabled       boolean NOT NULL DEFAULT false,
  deep_link_ios           text,
  deep_link_android       text,
  deep_link_fallback_url  text,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rules_campaign ON rules (campaign_id);
CREATE INDEX rules_link ON rules (link_id) WHERE link_id IS NOT NULL;
CREATE INDEX rules_workspace_created ON rules (workspace_id, created_at DESC, id DESC);
