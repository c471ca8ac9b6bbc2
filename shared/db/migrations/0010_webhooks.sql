-- Webhook endpoints of a workspace. The signing secret is stored sealed (AES-GCM
-- under a key derived from LINKROUTE_SECRET): senders need it to sign.
CREATE TABLE webhook_endpoints (
  id                text PRIMARY KEY,
  workspace_id      text NOT NULL REFERENCES workspaces (id),
  url               text NOT NULL,
  description       text NOT NULL DEFAULT '',
  events            text[] NOT NULL,
  sealed_secret     text NOT NULL,
  enabled           boolean NOT NULL DEFAULT true,
  -- 'failing': disabled by the sender after 24 h of failures; 'manual': by the client.
  disabled_reason   text CHECK (disabled_reason IN ('failing', 'manual')),
  -- Start of the current run of failed attempts; NULL after any success.
  failing_since     timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  deleted_at        timestamptz
);
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;

-- Each event once, with the exact body delivered (and signed) to every endpoint.
CREATE TABLE webhook_events (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL,
  type          text NOT NULL,
  body          text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- One delivery per (endpoint, event). A pending delivery is due at next_attempt_at;
-- a sender that takes one pushes next_attempt_at past the time its attempt may take,
-- so a sender that dies mid-attempt leaves it due again for any other.
CREATE TABLE webhook_deliveries (
  id                    text PRIMARY KEY,
  endpoint_id           text NOT NULL REFERENCES webhook_endpoints (id),
  event_id              text NOT NULL REFERENCES webhook_events (id),
  event_type            text NOT NULL,
  status                text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts              integer NOT NULL DEFAULT 0,
  response_status       integer,
  latency_ms            integer,
  error                 text,
  next_attempt_at       timestamptz,
  first_attempt_at      timestamptz,
  last_attempt_at       timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);

-- Link events for webhooks, queued by statement triggers in the same transaction as
-- the change (so none is lost if the API dies after committing), drained by the API
-- onto the bus. Only events an enabled endpoint of the workspace subscribes to are
-- queued. `data` is the links row as it was after the change.
CREATE TABLE webhook_outbox (
  seq           bigserial PRIMARY KEY,
  event_id      text NOT NULL,
  workspace_id  text NOT NULL,
  type          text NOT NULL,
  data          jsonb NOT NULL,
  -- Test events go to this endpoint only.
  endpoint_id   text,
  occurred_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE FUNCTION webhook_subscribed(workspace text, event_type text) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM webhook_endpoints e
    WHERE e.workspace_id = workspace AND e.deleted_at IS NULL AND e.enabled AND event_type = ANY (e.events));
$$;

CREATE FUNCTION webhook_enqueue_links_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_outbox (event_id, workspace_id, type, data)
  SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), n.workspace_id, 'link.created', to_jsonb(n)
  FROM new_rows n
  WHERE webhook_subscribed(n.workspace_id, 'link.created');
  RETURN NULL;
END $$;

CREATE FUNCTION webhook_enqueue_links_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_outbox (event_id, workspace_id, type, data)
  SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), c.workspace_id, c.type, c.data
  FROM (
    SELECT n.workspace_id, CASE WHEN n.deleted_at IS NOT NULL THEN 'link.deleted' ELSE 'link.updated' END AS type, to_jsonb(n) AS data
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    -- A deleted link changes no more (its snapshot-only updates are not news).
    WHERE o.deleted_at IS NULL
  ) c
  WHERE webhook_subscribed(c.workspace_id, c.type);
  RETURN NULL;
END $$;

CREATE TRIGGER links_webhooks_inserted AFTER INSERT ON links
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_enqueue_links_inserted();
CREATE TRIGGER links_webhooks_updated AFTER UPDATE ON links
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_enqueue_links_updated();

-- conversion.created is announced once per order: the first conversion of an
-- (workspace, order) claims it here (conversions without an orderId claim their own id).
CREATE TABLE webhook_conversion_claims (
  workspace_id   text NOT NULL,
  order_key      text NOT NULL,
  conversion_id  text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, order_key)
);
