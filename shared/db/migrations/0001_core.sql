-- Workspaces own everything; every lookup below is scoped by workspace_id.
CREATE TABLE workspaces (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  plan        text NOT NULL CHECK (plan IN ('starter', 'pro', 'enterprise')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Keys are stored only as SHA-256 hashes (they carry ~190 random bits, so a
-- fast hash is enough); key_prefix is what a person sees to recognise a key.
CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces (id),
  name          text NOT NULL DEFAULT '',
  key_hash      text NOT NULL UNIQUE,
  key_prefix    text NOT NULL,
  scopes        text[] NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);

CREATE TABLE campaigns (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL REFERENCES workspaces (id),
  name          text NOT NULL,
  description   text NOT NULL DEFAULT '',
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'archived')),
  is_default    boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX campaigns_one_default ON campaigns (workspace_id) WHERE is_default;
CREATE INDEX campaigns_workspace_created ON campaigns (workspace_id, created_at DESC, id DESC);

CREATE TABLE domains (
  id                  text PRIMARY KEY,
  workspace_id        text NOT NULL REFERENCES workspaces (id),
  hostname            text NOT NULL,
  status              text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified', 'failed')),
  verification_token  text NOT NULL,
  failure_reason      text,
  verified_at         timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  deleted_at          timestamptz
);
CREATE UNIQUE INDEX domains_hostname_live ON domains (lower(hostname)) WHERE deleted_at IS NULL;
CREATE INDEX domains_workspace ON domains (workspace_id);

CREATE TABLE links (
  id                      text PRIMARY KEY,
  workspace_id            text NOT NULL REFERENCES workspaces (id),
  campaign_id             text NOT NULL REFERENCES campaigns (id),
  domain_id               text REFERENCES domains (id),
  -- '' for the default redirect domain, else the domain id: the scope in which
  -- a short code is unique. The unique index includes deleted rows, so a
  -- short code is never handed out twice on a domain.
  domain_key              text NOT NULL,
  short_code              text NOT NULL,
  destination_url         text NOT NULL,
  -- NULL means "follow destination_url" (DESIGN.md "Destinations").
  default_destination     text,
  title                   text NOT NULL DEFAULT '',
  description             text NOT NULL DEFAULT '',
  enabled                 boolean NOT NULL DEFAULT true,
  password_hash           text,
  expires_at              timestamptz,
  expired_url             text,
  clicks_limit            integer,
  redirect_behavior       text NOT NULL DEFAULT 'auto' CHECK (redirect_behavior IN ('auto', 'always', 'rule_only', 'never')),
  deep_link_enabled       boolean NOT NULL DEFAULT false,
  deep_link_ios           text,
  deep_link_android       text,
  deep_link_fallback_url  text,
  conversion_tracking     boolean NOT NULL DEFAULT false,
  tracking_type           text NOT NULL DEFAULT 'pixel' CHECK (tracking_type IN ('pixel', 's2s')),
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  deleted_at              timestamptz
);
CREATE UNIQUE INDEX links_short_code ON links (domain_key, short_code);
CREATE INDEX links_workspace_created ON links (workspace_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX links_campaign ON links (campaign_id) WHERE deleted_at IS NULL;
